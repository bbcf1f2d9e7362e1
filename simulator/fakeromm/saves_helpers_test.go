package fakeromm

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"
)

// multipartSave is a multipart body with one saveFile part named filename
// (the raw Content-Disposition parameter, quotes escaped as Go's writer
// escapes them); noName sends the part as a plain field.
func multipartSave(t testing.TB, filename string, noName bool, content []byte) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	h := make(map[string][]string)
	disp := `form-data; name="saveFile"`
	if !noName {
		disp += `; filename="` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(filename) + `"`
	}
	h["Content-Disposition"] = []string{disp}
	h["Content-Type"] = []string{"application/octet-stream"}
	pw, err := mw.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	pw.Write(content)
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), b.Bytes()
}

// uploadSave posts a save to base/api/saves?query and returns the status
// and the body.
func uploadSave(t testing.TB, base, token, query, filename string, content []byte) (int, []byte) {
	t.Helper()
	ct, body := multipartSave(t, filename, false, content)
	return postRaw(t, base+"/api/saves?"+query, token, ct, body)
}

func postRaw(t testing.TB, url, token, contentType string, body []byte) (int, []byte) {
	t.Helper()
	code, _, out := rawDo(t, http.MethodPost, url, token, contentType, body)
	return code, out
}

// rawDo sends body as is with contentType and returns the status, the
// headers and the answer.
func rawDo(t testing.TB, method, url, token, contentType string, body []byte) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, out
}

// saveAnswer is the part of SaveSchema the tests read.
type saveAnswer struct {
	ID             int     `json:"id"`
	ROMID          int     `json:"rom_id"`
	FileName       string  `json:"file_name"`
	FileNameNoTags string  `json:"file_name_no_tags"`
	FileNameNoExt  string  `json:"file_name_no_ext"`
	FileExtension  string  `json:"file_extension"`
	FilePath       string  `json:"file_path"`
	FullPath       string  `json:"full_path"`
	DownloadPath   string  `json:"download_path"`
	FileSizeBytes  int64   `json:"file_size_bytes"`
	Slot           *string `json:"slot"`
	Emulator       *string `json:"emulator"`
	ContentHash    *string `json:"content_hash"`
	UpdatedAt      string  `json:"updated_at"`
	OriginDeviceID *string `json:"origin_device_id"`
	DeviceSyncs    []struct {
		DeviceID  string `json:"device_id"`
		IsCurrent bool   `json:"is_current"`
	} `json:"device_syncs"`
}

type opAnswer struct {
	Action            string  `json:"action"`
	ROMID             int     `json:"rom_id"`
	SaveID            *int    `json:"save_id"`
	FileName          string  `json:"file_name"`
	Slot              *string `json:"slot"`
	Reason            string  `json:"reason"`
	ServerUpdatedAt   *string `json:"server_updated_at"`
	ServerContentHash *string `json:"server_content_hash"`
}

type negotiation struct {
	SessionID     int        `json:"session_id"`
	Operations    []opAnswer `json:"operations"`
	TotalUpload   int        `json:"total_upload"`
	TotalDownload int        `json:"total_download"`
	TotalConflict int        `json:"total_conflict"`
	TotalNoOp     int        `json:"total_no_op"`
}

// clientSaveBody is one ClientSaveState.
func clientSaveBody(romID int, slot any, hash any, at time.Time) map[string]any {
	return map[string]any{"rom_id": romID, "file_name": fmt.Sprintf("rom%d.srm", romID), "slot": slot, "emulator": "snes9x",
		"content_hash": hash, "updated_at": at.Format(time.RFC3339Nano), "file_size_bytes": 8}
}

// summary is "action/reason" per operation, for got/want messages.
func (n negotiation) summary() []string {
	var out []string
	for _, op := range n.Operations {
		out = append(out, fmt.Sprintf("%d:%s/%s", op.ROMID, op.Action, op.Reason))
	}
	return out
}
