package fakeromm

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Devices as RomM registers them (endpoints/device.py,
// handler/database/devices_handler.py): ids are UUID strings, rows belong
// to a user, and a registration that matches an existing device's
// fingerprint returns that device (200) instead of adding one (201).

// Device is one registered device. An empty string is a JSON null.
type Device struct {
	ID                     string
	UserID                 int // 0 in AddDevice: the fake's user
	Name                   string
	Platform               string
	Client                 string
	ClientVersion          string
	IPAddress              string
	MACAddress             string
	Hostname               string
	ClientDeviceIdentifier string // set by the device flow
	SyncMode               string // api, file_transfer or push_pull; "" in AddDevice: api
	SyncEnabled            bool
	SyncConfig             map[string]any
	LastSeen               time.Time
	CreatedAt              time.Time
	UpdatedAt              time.Time
}

type deviceJSON struct {
	ID                     string         `json:"id"`
	UserID                 int            `json:"user_id"`
	Name                   *string        `json:"name"`
	Platform               *string        `json:"platform"`
	Client                 *string        `json:"client"`
	ClientVersion          *string        `json:"client_version"`
	IPAddress              *string        `json:"ip_address"`
	MACAddress             *string        `json:"mac_address"`
	Hostname               *string        `json:"hostname"`
	ClientDeviceIdentifier *string        `json:"client_device_identifier"`
	SyncMode               string         `json:"sync_mode"`
	SyncEnabled            bool           `json:"sync_enabled"`
	SyncConfig             map[string]any `json:"sync_config"`
	LastSeen               *string        `json:"last_seen"`
	CreatedAt              string         `json:"created_at"`
	UpdatedAt              string         `json:"updated_at"`
}

func (d *Device) json() deviceJSON {
	var seen *string
	if !d.LastSeen.IsZero() {
		seen = strp(pyISO(d.LastSeen))
	}
	return deviceJSON{ID: d.ID, UserID: d.UserID, Name: nonEmpty(d.Name), Platform: nonEmpty(d.Platform),
		Client: nonEmpty(d.Client), ClientVersion: nonEmpty(d.ClientVersion), IPAddress: nonEmpty(d.IPAddress),
		MACAddress: nonEmpty(d.MACAddress), Hostname: nonEmpty(d.Hostname),
		ClientDeviceIdentifier: nonEmpty(d.ClientDeviceIdentifier), SyncMode: d.SyncMode, SyncEnabled: d.SyncEnabled,
		SyncConfig: d.SyncConfig, LastSeen: seen, CreatedAt: pyISO(d.CreatedAt), UpdatedAt: pyISO(d.UpdatedAt)}
}

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// AddDevice registers d as if a client had (for a test that starts with
// a device in place, or one of another user when d.UserID is not 0 or 1)
// and returns its id (d.ID, or a new UUID).
func (s *Server) AddDevice(d Device) string {
	s.init()
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	return s.addDevice(d).ID
}

// addDevice fills d's defaults and stores it; the caller holds s.state.mu.
func (s *Server) addDevice(d Device) *Device {
	now := s.now()
	if d.ID == "" {
		d.ID = newUUID()
	}
	if d.UserID == 0 {
		d.UserID = ownerID
	}
	if d.SyncMode == "" {
		d.SyncMode = "api"
	}
	if d.CreatedAt.IsZero() {
		d.CreatedAt = now
	}
	if d.UpdatedAt.IsZero() {
		d.UpdatedAt = d.CreatedAt
	}
	dev := &d
	s.state.devices = append(s.state.devices, dev)
	return dev
}

// Devices returns every device, oldest first.
func (s *Server) Devices() []Device {
	s.init()
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	out := make([]Device, 0, len(s.state.devices))
	for _, d := range s.state.devices {
		out = append(out, *d)
	}
	return out
}

// DeleteDevice removes a device, as deleting it in RomM's web UI does (its
// heartbeats answer 404 from now on), and reports whether there was one.
func (s *Server) DeleteDevice(id string) bool {
	s.init()
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	for i, d := range s.state.devices {
		if d.ID == id {
			s.state.devices = append(s.state.devices[:i], s.state.devices[i+1:]...)
			return true
		}
	}
	return false
}

// device is the user's device id, or nil; the caller holds s.state.mu.
func (s *Server) device(id string, user int) *Device {
	for _, d := range s.state.devices {
		if d.ID == id && d.UserID == user {
			return d
		}
	}
	return nil
}

// fingerprint is get_device_by_fingerprint as register_device calls it
// (mac_address, hostname, platform; not ip_address): the same MAC, else
// the same hostname and platform, both given.
func (s *Server) fingerprint(user int, mac, hostname, platform string) *Device {
	if mac != "" {
		for _, d := range s.state.devices {
			if d.UserID == user && d.MACAddress == mac {
				return d
			}
		}
	}
	if hostname != "" && platform != "" {
		for _, d := range s.state.devices {
			if d.UserID == user && d.Hostname == hostname && d.Platform == platform {
				return d
			}
		}
	}
	return nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

var syncModes = [...]string{"api", "file_transfer", "push_pull"}

func (s *Server) registerDevice(c *call) {
	var d Device
	allowExisting, allowDuplicate := true, false
	if b, ok := readBody(c); ok {
		d.Name, d.Platform, d.Client = deref(b.optStr("name", 0)), deref(b.optStr("platform", 0)), deref(b.optStr("client", 0))
		d.ClientVersion, d.IPAddress = deref(b.optStr("client_version", 0)), deref(b.optStr("ip_address", 0))
		d.MACAddress, d.Hostname = deref(b.optStr("mac_address", 0)), deref(b.optStr("hostname", 0))
		if m := b.optStr("sync_mode", 0); m != nil {
			if *m != syncModes[0] && *m != syncModes[1] && *m != syncModes[2] {
				b.fail("sync_mode", "enum", "Input should be 'api', 'file_transfer' or 'push_pull'", *m,
					map[string]any{"expected": "'api', 'file_transfer' or 'push_pull'"})
			}
			d.SyncMode = *m
		}
		if raw, ok := b.get("sync_config", false); ok {
			if err := json.Unmarshal(raw, &d.SyncConfig); err != nil || d.SyncConfig == nil {
				b.fail("sync_config", "dict_type", "Input should be a valid dictionary", decodeAny(raw), nil)
			}
		}
		allowExisting, allowDuplicate = b.boolean("allow_existing", true), b.boolean("allow_duplicate", false)
		b.boolean("reset_syncs", false) // the fake keeps no save syncs to reset
		if allowDuplicate {
			allowExisting = false
		}
	}
	if !c.writeReady(ScopeDevicesWrite) {
		return
	}
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	now := s.now()
	if !allowDuplicate {
		if ex := s.fingerprint(ownerID, d.MACAddress, d.Hostname, d.Platform); ex != nil {
			if !allowExisting {
				writeJSON(c.w, http.StatusConflict, map[string]any{"detail": map[string]any{"error": "device_exists",
					"message": "A device with this fingerprint already exists", "device_id": ex.ID}})
				return
			}
			ex.LastSeen = now
			writeJSON(c.w, http.StatusOK, deviceCreateJSON(ex))
			return
		}
	}
	d.UserID, d.SyncEnabled, d.LastSeen = ownerID, true, now
	writeJSON(c.w, http.StatusCreated, deviceCreateJSON(s.addDevice(d)))
}

func deviceCreateJSON(d *Device) map[string]any {
	return map[string]any{"device_id": d.ID, "name": nonEmpty(d.Name), "created_at": pyISO(d.CreatedAt)}
}

func (s *Server) listDevices(c *call) {
	if !c.ready(ScopeDevicesRead) {
		return
	}
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	out := []deviceJSON{}
	for _, d := range s.state.devices {
		if d.UserID == ownerID {
			out = append(out, d.json())
		}
	}
	writeJSON(c.w, http.StatusOK, out)
}

func (s *Server) getDevice(c *call) {
	if !c.ready(ScopeDevicesRead) {
		return
	}
	id := c.vars["device_id"]
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	d := s.device(id, ownerID)
	if d == nil {
		writeDetail(c.w, http.StatusNotFound, fmt.Sprintf("Device with ID %s not found", id))
		return
	}
	writeJSON(c.w, http.StatusOK, d.json())
}
