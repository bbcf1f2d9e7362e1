package romm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// saveBuffer is DownloadSave's read size.
const saveBuffer = 32 << 10

// DownloadSave streams save id (GET /api/saves/{id}/content?optimistic=false; assets.read, and
// devices.read with a deviceID; 5.0+) into dst and returns the bytes written. optimistic=false
// keeps RomM from marking the save synced before the cabinet has it: call ConfirmSaveDownloaded
// once the file is safely in place. deviceID "" and sessionID 0 are omitted; a session counts the
// download.
//
// It writes at most max bytes (MaxSaveBytes when max <= 0): a Content-Length over max is refused
// (ErrTooLarge) before anything is written, and a body that runs past max is stopped there. A
// body that breaks off, or sends nothing for three times the client's timeout (30 s by default),
// is an error; there is no resume (saves are small), so the caller discards what dst got on any
// error, and checks the bytes against the operation's hash itself.
func (c *Client) DownloadSave(ctx context.Context, id int, deviceID string, sessionID int, dst io.Writer, max int64) (int64, error) {
	const op = "download a save from RomM"
	switch {
	case !romIDOK(id):
		return 0, newError(ErrInvalid, nil, "%s: save id %d is not a RomM save id: take it from the negotiation", op, id)
	case sessionID < 0 || sessionID > 1<<31-1:
		return 0, newError(ErrInvalid, nil, "%s: sync session %d is not one RomM issues: negotiate first", op, sessionID)
	case dst == nil:
		return 0, newError(ErrInvalid, nil, "%s: no file to write to", op)
	}
	if max <= 0 {
		max = MaxSaveBytes
	}
	q := url.Values{"optimistic": {"false"}}
	if deviceID != "" {
		if err := checkDeviceID(op, deviceID); err != nil {
			return 0, err
		}
		q.Set("device_id", deviceID)
	}
	if sessionID > 0 {
		q.Set("session_id", strconv.Itoa(sessionID))
	}
	v, err := c.require(ctx, "save sync", 5, 0)
	if err != nil {
		return 0, err
	}
	r := request{path: "/api/saves/" + strconv.Itoa(id) + "/content", query: q, scope: "assets.read", version: v}
	if deviceID != "" {
		r.scope = scopeFor2(v, "assets.read", "devices.read")
	}
	d := saveDownload{c: c, id: id, route: r.route(), idle: 3 * c.timeout}
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(d.idle, func() { cancel(errIdle) })
	defer timer.Stop()

	u := *c.base
	u.Path, u.RawPath, u.RawQuery = c.base.Path+r.path, "", q.Encode()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, newError(ErrInvalid, nil, "%s: build the request: check cabinet.romm.url", d.route)
	}
	req.Header.Set("User-Agent", "batocera-cabinet")
	req.Header.Set("Accept-Encoding", "identity") // the save's own bytes, as RomM's hash covers them
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, d.broken(ctx, actx, 0, false, err)
	}
	defer resp.Body.Close()
	timer.Reset(d.idle)
	if resp.StatusCode != http.StatusOK {
		return 0, d.refused(ctx, r, resp, deviceID)
	}
	if ct := resp.Header.Get("Content-Type"); htmlType(ct) {
		return 0, newError(ErrNotRomM, nil, "the download of save %d answered with a web page (%s), not the save: a proxy or sign-in page in front of RomM stops the cabinet; let it through to RomM's /api",
			id, c.quote(ct, 60))
	}
	if resp.ContentLength > max {
		return 0, newError(ErrTooLarge, nil, "RomM's save %d is %d bytes, more than the %d the cabinet takes for a save: look at the save in RomM", id, resp.ContentLength, max)
	}
	buf := make([]byte, saveBuffer)
	var n int64
	for first := true; ; first = false {
		k, rerr := resp.Body.Read(buf)
		if k > 0 {
			timer.Reset(d.idle)
			if first && htmlPage(buf[:k]) {
				return 0, newError(ErrNotRomM, nil, "the download of save %d answered with a web page, not the save: a proxy or sign-in page in front of RomM stops the cabinet; let it through to RomM's /api", id)
			}
			chunk := buf[:k]
			over := n+int64(k) > max
			if over {
				chunk = chunk[:max-n]
			}
			w, werr := dst.Write(chunk)
			n += int64(w)
			switch {
			case werr != nil:
				return n, newError(nil, werr, "download save %d: write it: %s", id, untrusted.Clean(werr.Error(), 300))
			case over:
				return n, newError(ErrTooLarge, nil, "RomM sent more than the %d bytes the cabinet takes for save %d: look at the save in RomM", max, id)
			}
		}
		switch {
		case rerr == io.EOF:
			return n, nil
		case rerr != nil:
			return n, d.broken(ctx, actx, n, true, rerr)
		}
	}
}

// saveDownload names one DownloadSave for its errors.
type saveDownload struct {
	c     *Client
	id    int
	route string
	idle  time.Duration
}

// broken is a failed round trip (reading false) or body read: the caller's context, the idle
// timeout, or the network.
func (d saveDownload) broken(ctx, actx context.Context, at int64, reading bool, err error) error {
	switch {
	case ctx.Err() != nil:
		return newError(nil, ctx.Err(), "download save %d: stopped at byte %d (%s)", d.id, at, ctx.Err())
	case context.Cause(actx) == errIdle:
		return newError(nil, context.DeadlineExceeded, "RomM sent nothing for %s during the download of save %d (at byte %d): check the network to RomM, then sync again",
			d.idle, d.id, at)
	case !reading:
		return d.c.transportError(ctx, d.route, nil, err)
	}
	inner := err
	var ue *url.Error
	if errors.As(err, &ue) {
		inner = ue.Err
	}
	return newError(nil, nil, "the download of save %d broke off at byte %d (%s): sync again; if it keeps happening, look at RomM's log or the proxy in front of it",
		d.id, at, d.c.redactAll(untrusted.Clean(inner.Error(), 200), nil))
}

// refused maps every answer that is not the save.
func (d saveDownload) refused(ctx context.Context, r request, resp *http.Response, deviceID string) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	body = d.c.redactBody(body)
	status := resp.StatusCode
	switch {
	case (status == http.StatusUnauthorized || status == http.StatusForbidden) && looksHTML(resp.Header.Get("Content-Type"), body):
		return newError(ErrNotRomM, nil,
			"the download of save %d answered %d with a login or error page, not RomM's: a proxy in front of RomM stops the cabinet; let it through to RomM's /api, or point cabinet.romm.url at RomM itself",
			d.id, status)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		err := d.c.authError(r, status)
		if deviceID != "" {
			err = d.c.missingScope(ctx, r.version, err, probeDevicesRead, "assets.read")
		}
		return err
	case status == http.StatusNotFound:
		if err := d.c.deviceRefusal(status, body, deviceID); err != nil {
			return err
		}
		return newError(ErrNotFound, nil, "RomM has no save %d any more (or lost its file): negotiate again", d.id)
	case status >= 200 && status <= 299:
		return newError(ErrNotRomM, nil, "RomM answered %d to %s instead of the save: is cabinet.romm.url the RomM address?", status, d.route)
	}
	return d.c.statusError(r, status, body)
}

// ConfirmSaveDownloaded tells RomM that deviceID now has save id (POST /api/saves/{id}/downloaded,
// devices.write, 5.0+): RomM records the device as synced to the save's current version, so the
// next negotiation compares against it.
func (c *Client) ConfirmSaveDownloaded(ctx context.Context, id int, deviceID string) error {
	const op = "confirm a save download to RomM"
	if !romIDOK(id) {
		return newError(ErrInvalid, nil, "%s: save id %d is not a RomM save id: take it from the negotiation", op, id)
	}
	if err := checkDeviceID(op, deviceID); err != nil {
		return err
	}
	v, err := c.require(ctx, "save sync", 5, 0)
	if err != nil {
		return err
	}
	w := writeRequest{request: request{path: "/api/saves/" + strconv.Itoa(id) + "/downloaded", max: maxJSON, scope: "devices.write",
		version: v, shape: &syncJSON}, method: http.MethodPost, body: map[string]string{"device_id": deviceID}}
	status, body, err := c.send(ctx, w)
	switch {
	case err != nil:
		return err
	case status >= 200 && status <= 299:
		return nil
	case status == http.StatusNotFound && strings.HasPrefix(c.detail(body), "Save "):
		return newError(ErrNotFound, nil, "RomM has no save %d any more: negotiate again", id)
	}
	if err := c.deviceRefusal(status, body, deviceID); err != nil {
		return err
	}
	return c.writeStatusError(&w, status, body)
}

// CompleteSync closes a sync session (POST /api/sync/sessions/{id}/complete, devices.write, 5.0+)
// with the operations that succeeded and failed; RomM keeps these counts instead of the ones it
// added up. A session a later negotiation cancelled, or one completed already, is refused.
func (c *Client) CompleteSync(ctx context.Context, sessionID, completed, failed int) error {
	const op = "close the save sync session in RomM"
	switch {
	case !romIDOK(sessionID):
		return newError(ErrInvalid, nil, "%s: sync session %d is not one RomM issues: negotiate first", op, sessionID)
	case completed < 0 || failed < 0 || completed > 1<<31-1 || failed > 1<<31-1:
		return newError(ErrInvalid, nil, "%s: the counts of operations must be 0 or more", op)
	}
	v, err := c.require(ctx, "save sync", 5, 0)
	if err != nil {
		return err
	}
	w := writeRequest{request: request{path: "/api/sync/sessions/" + strconv.Itoa(sessionID) + "/complete", max: maxJSON,
		scope: "devices.write", version: v, shape: &syncJSON}, method: http.MethodPost,
		body: map[string]int{"operations_completed": completed, "operations_failed": failed}}
	status, body, err := c.send(ctx, w)
	switch {
	case err != nil:
		return err
	case status >= 200 && status <= 299:
		return nil
	case status == http.StatusNotFound:
		return newError(ErrNotFound, nil, "RomM has no sync session %d: negotiate again", sessionID)
	case status == http.StatusBadRequest:
		says := ""
		if d := c.detail(body); d != "" {
			says = fmt.Sprintf(" (RomM says %q)", d)
		}
		return newError(ErrInvalid, nil, "RomM's sync session %d is closed already%s: a later negotiation for this device cancels it; negotiate again", sessionID, says)
	}
	return c.writeStatusError(&w, status, body)
}

// Saves lists the saves RomM holds for a ROM (GET /api/saves?rom_id&slot, assets.read, 5.0+),
// slot "" meaning every slot (and the null one), in RomM's order. Null-slot saves, which a
// negotiation never offers, are here.
func (c *Client) Saves(ctx context.Context, romID int, slot string) ([]Save, error) {
	const op = "list saves in RomM"
	if !romIDOK(romID) {
		return nil, newError(ErrInvalid, nil, "%s: ROM id %d is not a RomM ROM id (they are positive numbers)", op, romID)
	}
	if err := checkField(op, "slot", slot, false, maxSlot); err != nil {
		return nil, err
	}
	v, err := c.require(ctx, "save sync", 5, 0)
	if err != nil {
		return nil, err
	}
	q := url.Values{"rom_id": {strconv.Itoa(romID)}}
	if slot != "" {
		q.Set("slot", slot)
	}
	body, err := c.fetch(ctx, request{path: "/api/saves", query: q, max: maxJSON, scope: "assets.read", version: v, shape: &syncJSON})
	if err != nil {
		return nil, err
	}
	return decodeSaves(body)
}
