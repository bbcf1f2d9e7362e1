package fakeromm

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
)

type created struct {
	DeviceID  string  `json:"device_id"`
	Name      *string `json:"name"`
	CreatedAt string  `json:"created_at"`
}

func register(t *testing.T, base, token string, body map[string]any, want int) created {
	t.Helper()
	var c created
	sendJSON(t, "POST", base, "/api/devices", token, body, want, &c)
	return c
}

func TestRegisterDevice(t *testing.T) {
	s, base, _ := writeServer(t)
	tok := s.Token()
	cab := map[string]any{"name": "Cabinet", "platform": "Batocera", "client": "cabinet", "client_version": "1.0",
		"hostname": "batocera", "mac_address": "02:00:00:00:00:01"}
	first := register(t, base, tok, cab, http.StatusCreated)
	if first.DeviceID == "" || first.Name == nil || *first.Name != "Cabinet" || first.CreatedAt != "2025-06-01T12:00:00+00:00" {
		t.Fatalf("registered %+v", first)
	}

	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name string
		body map[string]any
		want int  // status
		same bool // the first device answered
	}{
		{"same MAC, allow_existing by default", with("mac_address", "02:00:00:00:00:01", "name", "Other"), 200, true},
		{"same hostname and platform", with("hostname", "batocera", "platform", "Batocera"), 200, true},
		{"same hostname, no platform", with("hostname", "batocera"), 201, false},
		{"same hostname, other platform", with("hostname", "batocera", "platform", "Android"), 201, false},
		{"same name and platform is no match", with("name", "Cabinet", "platform", "Batocera", "client", "cabinet"), 201, false},
		{"allow_duplicate adds one", with("mac_address", "02:00:00:00:00:01", "allow_duplicate", true), 201, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := register(t, base, tok, tc.body, tc.want)
			if (got.DeviceID == first.DeviceID) != tc.same {
				t.Errorf("device %s, first %s: want same=%v", got.DeviceID, first.DeviceID, tc.same)
			}
		})
	}

	code, _, body := send(t, "POST", base, "/api/devices", tok, with("mac_address", "02:00:00:00:00:01", "allow_existing", false))
	var conflict struct {
		Detail struct {
			Error    string `json:"error"`
			Message  string `json:"message"`
			DeviceID string `json:"device_id"`
		} `json:"detail"`
	}
	json.Unmarshal(body, &conflict)
	if code != http.StatusConflict || conflict.Detail.Error != "device_exists" || conflict.Detail.DeviceID != first.DeviceID {
		t.Errorf("allow_existing=false on a known MAC: %d %s", code, body)
	}

	if n := len(s.Devices()); n != 5 {
		t.Errorf("%d devices, want 5", n)
	}
	var one deviceJSON
	getJSON(t, base, "/api/devices/"+first.DeviceID, tok, http.StatusOK, &one)
	if one.Hostname == nil || *one.Hostname != "batocera" || one.SyncMode != "api" || !one.SyncEnabled || one.UserID != ownerID {
		t.Errorf("GET device: %+v", one)
	}
	var all []deviceJSON
	getJSON(t, base, "/api/devices", tok, http.StatusOK, &all)
	if len(all) != 5 || all[0].ID != first.DeviceID {
		t.Errorf("GET devices: %d, first %v", len(all), all)
	}
	wantDetail(t, "GET", base, "/api/devices/nope", tok, nil, http.StatusNotFound, "Device with ID nope not found")

	// Another user's device is invisible.
	other := s.AddDevice(Device{UserID: 2, Name: "Phone", MACAddress: "02:00:00:00:00:02"})
	getJSON(t, base, "/api/devices/"+other, tok, http.StatusNotFound, nil)
	if got := register(t, base, tok, with("mac_address", "02:00:00:00:00:02"), 201); got.DeviceID == other {
		t.Error("registration matched another user's device")
	}
}

func TestRegisterDeviceRefusals(t *testing.T) {
	s, base, _ := writeServer(t)
	code, _, body := send(t, "POST", base, "/api/devices", s.Token(), map[string]any{"sync_mode": "ftp", "sync_config": []int{1},
		"allow_existing": "maybe", "name": 3})
	if want := []string{"body.name", "body.sync_mode", "body.sync_config", "body.allow_existing"}; code != 422 ||
		!reflect.DeepEqual(locs(t, body), want) {
		t.Errorf("bad body: %d at %v, want 422 at %v", code, locs(t, body), want)
	}
	register(t, base, s.Token(), map[string]any{}, http.StatusCreated) // every field is optional

	_, ro := newServer(t, Options{}) // ReadScopes: no devices.write
	wantDetail(t, "POST", ro, "/api/devices", DefaultToken, map[string]any{}, http.StatusForbidden, "Forbidden")
	getJSON(t, ro, "/api/devices", DefaultToken, http.StatusOK, nil)
	getJSON(t, ro, "/api/devices", "", http.StatusUnauthorized, nil)

	s.FailWrites(http.StatusServiceUnavailable)
	wantDetail(t, "POST", base, "/api/devices", s.Token(), map[string]any{}, 503, "Service Unavailable")
	s.FailWrites(0)
	register(t, base, s.Token(), map[string]any{}, http.StatusCreated)
}
