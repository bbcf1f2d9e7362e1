package romm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// ErrDeviceUnknown: RomM has no device with that id registered to the token's user (a 404 naming
// the device). Register the cabinet again with RegisterDevice and keep the new id.
var ErrDeviceUnknown = errors.New("RomM does not know this device")

// DeviceInfo describes the cabinet for POST /api/devices. RomM finds an already registered device
// by MAC, else by host name and platform (devices_handler.get_device_by_fingerprint), so at least a
// MAC or a host name with a platform is required: without one every call would add a new device.
type DeviceInfo struct {
	Name, Platform, Client, ClientVersion, Hostname, MAC string
}

// Column sizes of RomM's devices table (models/device.py); DeviceCreatePayload itself has no limits,
// so a longer value would fail in the database.
const (
	maxDeviceID = 255
	maxHostname = 255
)

type deviceCreatePayload struct {
	Name          *string `json:"name,omitempty"`
	Platform      *string `json:"platform,omitempty"`
	Client        *string `json:"client,omitempty"`
	ClientVersion *string `json:"client_version,omitempty"`
	Hostname      *string `json:"hostname,omitempty"`
	MAC           *string `json:"mac_address,omitempty"`
	AllowExisting bool    `json:"allow_existing"`
}

func (d DeviceInfo) payload() (deviceCreatePayload, error) {
	for _, f := range []struct {
		name, value string
		max         int
	}{
		{"name", d.Name, maxDeviceName},
		{"platform", d.Platform, maxClientField},
		{"client", d.Client, maxClientField},
		{"client version", d.ClientVersion, maxClientField},
		{"host name", d.Hostname, maxHostname},
	} {
		if err := checkField("register the cabinet in RomM", f.name, f.value, false, f.max); err != nil {
			return deviceCreatePayload{}, err
		}
	}
	mac := ""
	if d.MAC != "" {
		mac = normalizeMAC(d.MAC)
		if mac == "" {
			return deviceCreatePayload{}, newError(ErrInvalid, nil, "register the cabinet in RomM: the MAC address is not six hex pairs (such as b8:27:eb:12:34:56)")
		}
	}
	if mac == "" && (d.Hostname == "" || d.Platform == "") {
		return deviceCreatePayload{}, newError(ErrInvalid, nil,
			"register the cabinet in RomM: give a MAC address, or a host name and a platform, so RomM finds this cabinet again instead of adding a new device each time")
	}
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return deviceCreatePayload{Name: opt(d.Name), Platform: opt(d.Platform), Client: opt(d.Client),
		ClientVersion: opt(d.ClientVersion), Hostname: opt(d.Hostname), MAC: opt(mac), AllowExisting: true}, nil
}

// normalizeMAC returns the MAC as lowercase colon-separated pairs (17 characters, RomM's column),
// "" when it is not one. One form is kept so that RomM's fingerprint matches on every start.
func normalizeMAC(s string) string {
	if len(s) != 17 {
		return ""
	}
	var b strings.Builder
	for i := 0; i < 17; i++ {
		c := s[i]
		if i%3 == 2 {
			if c != ':' && c != '-' {
				return ""
			}
			b.WriteByte(':')
			continue
		}
		if hexHash(string(c), 1) == "" {
			return ""
		}
		b.WriteByte(c | 0x20) // ASCII lower case for A–F; digits are unchanged
	}
	return b.String()
}

// RegisterDevice registers the cabinet with RomM (POST /api/devices, devices.write, 4.8+) and
// returns its device id. With allow_existing RomM answers the id of the device it already has for
// this MAC (or host name and platform) instead of adding one, so it is safe to call on every start.
func (c *Client) RegisterDevice(ctx context.Context, d DeviceInfo) (deviceID string, err error) {
	body, err := d.payload()
	if err != nil {
		return "", err
	}
	v, err := c.require(ctx, "device registration", 4, 8)
	if err != nil {
		return "", err
	}
	resp, err := c.post(ctx, writeRequest{request: request{path: "/api/devices", max: maxJSON, scope: "devices.write", version: v},
		method: http.MethodPost, body: body})
	if err != nil {
		return "", err
	}
	var raw struct {
		DeviceID *string `json:"device_id"`
	}
	if err := json.Unmarshal(resp, &raw); err != nil {
		return "", newError(ErrBadData, nil, "read RomM's answer to the device registration: %s", jsonProblem(err))
	}
	if raw.DeviceID == nil || !deviceIDOK(*raw.DeviceID) {
		return "", newError(ErrBadData, nil, "RomM's answer to the device registration has no usable device_id: check that cabinet.romm.url points at RomM 4.8 or newer")
	}
	return *raw.DeviceID, nil
}

// deviceIDOK accepts RomM's device ids (a UUID today; up to 255 visible ASCII characters, the
// column size).
func deviceIDOK(s string) bool {
	if s == "" || len(s) > maxDeviceID {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func checkDeviceID(op, id string) error {
	if !deviceIDOK(id) {
		return newError(ErrInvalid, nil, "%s: the device id is not one RomM issues (1–%d visible characters): register the cabinet again", op, maxDeviceID)
	}
	return nil
}
