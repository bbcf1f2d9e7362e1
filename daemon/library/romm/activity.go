package romm

import (
	"context"
	"net/http"
	"net/url"
	"strings"
)

// Heartbeat tells RomM that romID is being played on deviceID (POST /api/activity/heartbeat,
// roms.user.write, 5.0+). RomM keeps the entry 90 s (ACTIVITY_TTL), so repeat it well inside that
// while the game runs.
//
// RomM answers 404 both for a ROM it does not have and for a device not registered to the token's
// user; it checks the ROM first and says which in the detail ("ROM 12 not found", "Device … not
// found for this user", endpoints/activity.py). The first Is ErrNotFound, the second
// ErrDeviceUnknown; a 404 without either detail (a proxy, a RomM without the route) is ErrNotFound.
func (c *Client) Heartbeat(ctx context.Context, romID int, deviceID string) error {
	const op = "report the game to RomM"
	if romID <= 0 || romID > 1<<31-1 {
		return newError(ErrInvalid, nil, "%s: ROM id %d is not a RomM ROM id (they are positive numbers)", op, romID)
	}
	if err := checkDeviceID(op, deviceID); err != nil {
		return err
	}
	v, err := c.require(ctx, "activity reporting", 5, 0)
	if err != nil {
		return err
	}
	w := writeRequest{request: request{path: "/api/activity/heartbeat", max: maxJSON, scope: "roms.user.write", version: v},
		method: http.MethodPost, body: struct {
			ROMID    int    `json:"rom_id"`
			DeviceID string `json:"device_id"`
		}{romID, deviceID}}
	status, body, err := c.send(ctx, w)
	if err != nil {
		return err
	}
	switch {
	case status >= 200 && status <= 299:
		return nil
	case status == http.StatusNotFound:
		detail := c.detail(body)
		switch {
		case strings.HasPrefix(detail, "Device "):
			return newError(ErrDeviceUnknown, nil, "RomM does not know device %s for this token's user: register the cabinet again (RegisterDevice) and use the new id", cleanLine(deviceID, 60))
		case strings.HasPrefix(detail, "ROM "):
			return newError(ErrNotFound, nil, "RomM has no ROM %d: the game is not in RomM's library (or was removed); search again for its id", romID)
		}
	}
	return c.writeStatusError(&w, status, body)
}

// ClearHeartbeat ends the activity entry of deviceID at once (DELETE /api/activity/heartbeat,
// roms.user.write, 5.0+), as when the game quits. RomM answers 204 whether or not there was one.
func (c *Client) ClearHeartbeat(ctx context.Context, deviceID string) error {
	if err := checkDeviceID("clear the game in RomM", deviceID); err != nil {
		return err
	}
	v, err := c.require(ctx, "activity reporting", 5, 0)
	if err != nil {
		return err
	}
	_, err = c.post(ctx, writeRequest{request: request{path: "/api/activity/heartbeat", query: url.Values{"device_id": {deviceID}},
		max: maxJSON, scope: "roms.user.write", version: v}, method: http.MethodDelete})
	return err
}
