package haentities

import (
	"math"
	"strconv"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Diagnostic entity keys: the daemon's health figures (entity_category diagnostic).
const (
	CPUTemperature  = "cpu_temperature"
	FreeSpace       = "free_space"
	BatoceraVersion = "batocera_version"
	CabinetVersion  = "cabinet_version"
	OutboxDepth     = "outbox_depth"
	OutboxDropped   = "outbox_dropped"
	MQTTReconnects  = "mqtt_reconnects"
)

// DiagnosticsInterval is how often the daemon publishes the diagnostic states. Their expire_after is
// three intervals: a missed publish or two is tolerated, a stopped daemon shows them unavailable.
const DiagnosticsInterval = 60 * time.Second

// Diagnostics is the catalogue of the daemon's diagnostic entities, in publishing order. Only the
// daemon announces and updates them; a hook keeps their configs (KeptTopics).
func Diagnostics() []Entity {
	one := 1
	expire := int(3 * DiagnosticsInterval / time.Second)
	diag := func(e Entity) Entity {
		e.Component, e.EntityCategory, e.ExpireAfter = ComponentSensor, "diagnostic", expire
		return e
	}
	return append([]Entity{
		diag(Entity{Key: CPUTemperature, Name: "CPU temperature", Icon: "mdi:thermometer", DeviceClass: "temperature",
			Unit: "°C", StateClass: "measurement", DisplayPrecision: &one}),
		diag(Entity{Key: FreeSpace, Name: "Free space", Icon: "mdi:harddisk", DeviceClass: "data_size", Unit: "GB",
			StateClass: "measurement", DisplayPrecision: &one}),
		// Not "Batocera version": with the default device name HA would show "Batocera Batocera version"
		// (and strip the repeated prefix). Text sensors: no unit, state_class or device_class.
		diag(Entity{Key: BatoceraVersion, Name: "OS version", Icon: "mdi:information-outline"}),
		diag(Entity{Key: CabinetVersion, Name: "Cabinet version", Icon: "mdi:information-outline"}),
		// Counts of messages: no unit (none of HA's fits, and a unitless count keeps statistics).
		diag(Entity{Key: OutboxDepth, Name: "Outbox depth", Icon: "mdi:tray-full", StateClass: "measurement"}),
		diag(Entity{Key: OutboxDropped, Name: "Outbox dropped", Icon: "mdi:tray-remove", StateClass: "total_increasing"}),
		diag(Entity{Key: MQTTReconnects, Name: "MQTT reconnects", Icon: "mdi:lan-disconnect", StateClass: "total_increasing"}),
	}, hostDiagnostics(diag)...)
}

// DiagnosticValues are the figures the diagnostic states show. An unknown figure publishes nothing:
// HA keeps the last value until expire_after, which beats an invalid one.
type DiagnosticValues struct {
	CPUTemperature  *float64  // °C, the hottest thermal zone; nil when unknown
	FreeBytes       *uint64   // free space of the state dir's filesystem; nil when unknown
	BatoceraVersion string    // first word of batocera.version; "" when unknown
	CabinetVersion  string    // "" when unknown
	OutboxDepth     int       // messages waiting for the broker
	OutboxDropped   uint64    // events dropped because the outbox was full
	MQTTReconnects  int64     // connections after the first one since the daemon started
	Boot            time.Time // when the machine booted; zero when unknown
	Load            *float64  // 1-minute load average; nil when unknown
	MemoryUsed      *float64  // % of RAM in use; nil when unknown
	IPAddress       string    // of the default route's interface; "" when unknown
}

// Bounds of a plausible CPU temperature; anything else is a broken sensor, not a reading.
const (
	minCelsius = -60
	maxCelsius = 200
)

// DiagnosticStates builds the retained states of the diagnostics that are known, in catalogue order.
func DiagnosticStates(s Settings, v DiagnosticValues, at time.Time) []Message {
	var out []Message
	st := func(entity, value string) {
		if s.has(entity) { // nothing on the topic of an entity that is not announced
			out = append(out, retained(s.StateTopic(entity), []byte(value), KindState, at))
		}
	}
	if t := v.CPUTemperature; t != nil && !math.IsNaN(*t) && *t >= minCelsius && *t <= maxCelsius {
		st(CPUTemperature, strconv.FormatFloat(math.Round(*t*10)/10, 'f', 1, 64))
	}
	if v.FreeBytes != nil {
		st(FreeSpace, strconv.FormatFloat(float64(*v.FreeBytes)/1e9, 'f', 2, 64))
	}
	if b := cleanVersion(v.BatoceraVersion); b != "" {
		st(BatoceraVersion, b)
	}
	if c := cleanVersion(v.CabinetVersion); c != "" {
		st(CabinetVersion, c)
	}
	st(OutboxDepth, strconv.Itoa(max(v.OutboxDepth, 0)))
	st(OutboxDropped, strconv.FormatUint(v.OutboxDropped, 10))
	st(MQTTReconnects, strconv.FormatInt(max(v.MQTTReconnects, 0), 10))
	if !v.Boot.IsZero() {
		st(LastBoot, formatTime(v.Boot))
	}
	if l := v.Load; l != nil && !math.IsNaN(*l) && !math.IsInf(*l, 0) && *l >= 0 {
		st(Load, strconv.FormatFloat(math.Round(*l*100)/100, 'f', 2, 64))
	}
	if m := v.MemoryUsed; m != nil && *m >= 0 && *m <= 100 {
		st(MemoryUsed, strconv.FormatFloat(math.Round(*m*10)/10, 'f', 1, 64))
	}
	if ip := untrusted.Clean(v.IPAddress, 64); ip != "" {
		st(IPAddress, ip)
	}
	return out
}

// cleanVersion is a version for a text state. "None" would read as unknown in HA: nothing is
// published then.
func cleanVersion(v string) string {
	if v = untrusted.Clean(v, maxDeviceRunes); v == NoneState {
		return ""
	}
	return v
}
