package romm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// DownloadOptions tune DownloadFile; the zero value is the defaults.
type DownloadOptions struct {
	// MaxRetries is how many times in a row a broken attempt (a dropped connection, a cut body,
	// IdleTimeout) is resumed; a retry that got bytes starts the count again. 0 means
	// DefaultMaxRetries, negative none.
	MaxRetries int
	// IdleTimeout aborts an attempt that gets no byte for this long (0: DefaultIdleTimeout).
	// There is no deadline on the whole download but ctx's: a large file takes minutes.
	IdleTimeout time.Duration
	// MaxBytes bounds a file whose size RomM does not list (0: DefaultMaxDownload).
	MaxBytes int64
	// Budget, when positive, is the most dst may hold whatever RomM lists or announces: a size
	// over it is refused before a byte is written, and a body that runs past it is stopped
	// there (ErrTooLarge). An installer sets it from the free space and its own cap, so that
	// no number from the server sizes what reaches the disk.
	Budget int64
	// Progress, when set, is called on the downloading goroutine with the bytes in dst and the
	// file's size (0 when unknown), about every 256 KiB and once at the end.
	Progress func(done, total int64)
	// Sleep waits out a backoff and returns ctx's error if ctx ends first; nil waits on a timer.
	// It is the seam for tests.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Download defaults.
const (
	DefaultMaxRetries  = 5
	DefaultIdleTimeout = 30 * time.Second
	DefaultMaxDownload = 64 << 30
)

const (
	downloadBuffer = 1 << 20   // one buffer per download, reused for every read
	flushAt        = 256 << 10 // write to dst once this much is buffered (and report progress)
	firstBackoff   = 250 * time.Millisecond
	maxBackoff     = 5 * time.Second
)

func (o DownloadOptions) withDefaults() DownloadOptions {
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultMaxRetries
	}
	if o.MaxRetries < 0 {
		o.MaxRetries = 0
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxDownload
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	return o
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// DownloadFile downloads RomFile f of ROM romID (GET /api/roms/{romID}/content/{f.Name}
// ?file_ids={f.ID}) into dst, from dst's current size on: a partial file is resumed with a Range
// request, and a RomM (or proxy) that answers a Range with the whole file has dst truncated and
// written from the start. A dropped connection, a cut body or IdleTimeout without a byte is
// resumed where it stopped, up to o.MaxRetries times in a row. It never writes more than
// f.SizeBytes when RomM lists a size (o.MaxBytes when not), nor more than o.Budget. It returns
// the bytes now in dst, also on error: dst keeps them, and a later call with the same dst resumes
// from there if the caller keeps the file (the error does not promise it does). Syncing dst is
// the caller's business.
func (c *Client) DownloadFile(ctx context.Context, romID int, f File, dst *os.File, o DownloadOptions) (int64, error) {
	switch {
	case romID <= 0 || romID > 1<<31-1:
		return 0, newError(ErrInvalid, nil, "ROM id %d is not a RomM ROM id (they are positive numbers): take it from a search", romID)
	case f.ID <= 0 || f.ID > 1<<31-1:
		return 0, newError(ErrInvalid, nil, "file id %d is not a RomM file id: take the file from the ROM's details", f.ID)
	case f.SizeBytes < 0:
		return 0, newError(ErrInvalid, nil, "file %s has a negative size: take the file from the ROM's details", cleanLine(f.Name, capFileName))
	case dst == nil:
		return 0, newError(ErrInvalid, nil, "download %s: no file to write to", cleanLine(f.Name, capFileName))
	}
	d := &download{c: c, romID: romID, f: f, dst: dst, o: o.withDefaults(), name: cleanLine(f.Name, capFileName)}
	if d.name == "" {
		d.name = "file " + strconv.Itoa(f.ID)
	}
	fi, err := dst.Stat()
	if err != nil {
		return 0, newError(nil, err, "download %s: read the partial file: %s", d.name, untrusted.Clean(err.Error(), 300))
	}
	d.have = fi.Size()
	v, err := c.require(ctx, "ROM downloads", 4, 0)
	if err != nil {
		return d.have, err
	}
	d.v = v
	if d.overBudget(f.SizeBytes) {
		return d.have, d.budgetError(f.SizeBytes)
	}
	if f.SizeBytes > 0 && d.have > f.SizeBytes {
		// Longer than RomM's file: not a part of it. Start again.
		if err := d.truncate(); err != nil {
			return d.have, err
		}
	}
	d.buf = make([]byte, downloadBuffer)
	return d.run(ctx)
}

// download is one DownloadFile.
type download struct {
	c     *Client
	romID int
	f     File
	name  string // f.Name cleaned, for messages
	dst   *os.File
	o     DownloadOptions
	v     Version
	buf   []byte

	have     int64 // bytes in dst: where the next byte goes
	total    int64 // the file's size: f.SizeBytes, else what an answer said; 0 unknown
	reported int64 // have at the last Progress call
}

// attemptError is a failed attempt. retry: resuming may help; restart: dst was emptied and the
// next attempt starts from byte 0 at once (it sends no Range, so this cannot repeat).
type attemptError struct {
	err     error
	retry   bool
	restart bool
}

func (d *download) run(ctx context.Context) (int64, error) {
	d.total = d.f.SizeBytes
	failures := 0
	backoff := firstBackoff
	for {
		before := d.have
		ae := d.attempt(ctx)
		switch {
		case ae == nil:
			d.progress(true)
			return d.have, nil
		case ctx.Err() != nil:
			return d.have, d.cancelled(ctx)
		case ae.restart:
			continue
		case !ae.retry:
			return d.have, ae.err
		}
		if d.have > before {
			failures, backoff = 0, firstBackoff
		}
		if failures >= d.o.MaxRetries {
			if failures == 0 {
				return d.have, ae.err
			}
			return d.have, newError(nil, ae.err, "%s, %d times in a row: check the network to RomM, then try again",
				ae.err.Error(), failures+1)
		}
		failures++
		if err := d.o.Sleep(ctx, backoff); err != nil {
			if ctx.Err() != nil {
				return d.have, d.cancelled(ctx)
			}
			return d.have, err
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

func (d *download) cancelled(ctx context.Context) error {
	return newError(nil, ctx.Err(), "download %s: stopped at byte %d of %s (%s)",
		d.name, d.have, d.size(), ctx.Err())
}

func (d *download) size() string {
	if d.total > 0 {
		return strconv.FormatInt(d.total, 10)
	}
	return "an unknown size"
}

func (d *download) route() string {
	return "GET /api/roms/" + strconv.Itoa(d.romID) + "/content/" + d.name
}

// errIdle is the cause of an attempt's context when IdleTimeout passed without a byte.
var errIdle = errors.New("no byte within the idle timeout")

// attempt is one request, from d.have on. A nil return means the file is complete.
func (d *download) attempt(ctx context.Context) *attemptError {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := time.AfterFunc(d.o.IdleTimeout, func() { cancel(errIdle) })
	defer idle.Stop()

	req, err := d.request(actx)
	if err != nil {
		return &attemptError{err: err}
	}
	resp, err := d.c.http.Do(req)
	if err != nil {
		return d.broken(ctx, actx, "RomM did not answer the download of "+d.name, err)
	}
	defer resp.Body.Close()
	idle.Reset(d.o.IdleTimeout)

	ctype := resp.Header.Get("Content-Type")
	ok := resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusPartialContent
	if ok && htmlType(ctype) && !htmlName(d.f.Name) {
		// Before anything touches dst: a sign-in page must not cost the partial file.
		return &attemptError{err: newError(ErrNotRomM, nil,
			"the download of %s answered with a web page (%s), not RomM's file: a proxy or sign-in page in front of RomM stops the cabinet; let it through to RomM's /api",
			d.name, d.c.quote(ctype, 60))}
	}
	switch resp.StatusCode {
	case http.StatusOK:
		if err := d.checkLength(resp.ContentLength, 0); err != nil {
			return &attemptError{err: err}
		}
		if d.have > 0 {
			// A 200 to a Range request is the whole file: start again.
			if err := d.truncate(); err != nil {
				return &attemptError{err: err}
			}
		}
		if d.f.SizeBytes == 0 && resp.ContentLength >= 0 {
			d.total = resp.ContentLength
		}
	case http.StatusPartialContent:
		if err := d.checkRange(resp.Header.Get("Content-Range")); err != nil {
			return &attemptError{err: err}
		}
		if err := d.checkLength(resp.ContentLength, d.have); err != nil {
			return &attemptError{err: err}
		}
	case http.StatusRequestedRangeNotSatisfiable:
		return d.unsatisfiable(resp.Header.Get("Content-Range"))
	default:
		return d.refused(resp)
	}
	if _, err := d.dst.Seek(d.have, io.SeekStart); err != nil {
		return &attemptError{err: d.writeError(err)}
	}
	return d.copy(ctx, actx, resp.Body, idle)
}

func (d *download) request(ctx context.Context) (*http.Request, error) {
	seg := d.f.Name
	if seg == "" || strings.ContainsAny(seg, "/\\") {
		// {file_name} only names the output; RomM picks the file by file_ids.
		seg = strconv.Itoa(d.f.ID)
	}
	u := *d.c.base
	u.Path = d.c.base.Path + "/api/roms/" + strconv.Itoa(d.romID) + "/content/" + seg
	u.RawPath = ""
	u.RawQuery = "file_ids=" + strconv.Itoa(d.f.ID)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, newError(ErrInvalid, nil, "%s: build the request: check cabinet.romm.url", d.route())
	}
	req.Header.Set("User-Agent", "batocera-cabinet")
	// No transparent gzip: ranges and sizes are of the file's own bytes.
	req.Header.Set("Accept-Encoding", "identity")
	if d.c.token != "" {
		req.Header.Set("Authorization", "Bearer "+d.c.token)
	}
	if d.have > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(d.have, 10)+"-")
	}
	return req, nil
}

// limit is the most dst may hold.
func (d *download) limit() int64 {
	n := d.o.MaxBytes
	if d.total > 0 {
		n = d.total
	}
	if d.o.Budget > 0 && n > d.o.Budget {
		n = d.o.Budget
	}
	return n
}

// budgetBinds reports whether the budget, not the file's size or MaxBytes, is the limit.
func (d *download) budgetBinds() bool {
	n := d.o.MaxBytes
	if d.total > 0 {
		n = d.total
	}
	return d.overBudget(n)
}

// overBudget reports a size (listed, announced or reached) the budget does not allow.
func (d *download) overBudget(n int64) bool { return d.o.Budget > 0 && n > d.o.Budget }

func (d *download) budgetError(listed int64) error {
	if listed > 0 {
		return newError(ErrTooLarge, nil, "RomM lists %d bytes for %s, more than the %d this download may write", listed, d.name, d.o.Budget)
	}
	return newError(ErrTooLarge, nil, "RomM sent more than the %d bytes this download may write for %s", d.o.Budget, d.name)
}

// checkLength refuses an answer whose Content-Length, from offset at, does not fit the file.
func (d *download) checkLength(n, at int64) error {
	if n < 0 {
		return nil
	}
	switch {
	case d.overBudget(at + n):
		return d.budgetError(at + n)
	case d.f.SizeBytes > 0 && at+n > d.f.SizeBytes:
		return d.tooMuch()
	case d.f.SizeBytes > 0 && at+n < d.f.SizeBytes:
		return newError(ErrBadData, nil, "RomM's file %s is %d bytes, not the %d it lists: the file changed in RomM; rescan the platform in RomM and search again",
			d.name, at+n, d.f.SizeBytes)
	case at+n > d.o.MaxBytes:
		return d.overMax()
	}
	return nil
}

func (d *download) tooMuch() error {
	switch {
	case d.budgetBinds():
		return d.budgetError(0)
	case d.f.SizeBytes > 0:
		return newError(ErrBadData, nil, "RomM sent more than the %d bytes it lists for %s: the file changed in RomM; rescan the platform in RomM and search again",
			d.f.SizeBytes, d.name)
	case d.total > 0:
		return newError(ErrBadData, nil, "RomM sent more than the %d bytes it announced for %s: download again", d.total, d.name)
	}
	return d.overMax()
}

func (d *download) overMax() error {
	n, unit := d.o.MaxBytes, "bytes"
	switch {
	case n%(1<<30) == 0:
		n, unit = n>>30, "GiB"
	case n%(1<<20) == 0:
		n, unit = n>>20, "MiB"
	}
	return newError(ErrTooLarge, nil, "RomM sent more than the %d %s the cabinet downloads for %s, which has no size in RomM", n, unit, d.name)
}

// checkRange holds a 206 to the range asked for: it starts at d.have, and its total is the size
// RomM lists.
func (d *download) checkRange(cr string) error {
	start, total, ok := parseContentRange(cr)
	if !ok || start != d.have {
		return newError(ErrBadData, nil, "RomM answered the resume of %s from byte %d with another range (%s): delete the partial file and download again",
			d.name, d.have, d.c.quote(cr, 80))
	}
	if total >= 0 {
		// d.total is RomM's listed size, or the size an earlier answer of this download gave.
		if d.total > 0 && total != d.total {
			return newError(ErrBadData, nil, "RomM's file %s is %d bytes, not the %d it lists: the file changed in RomM; rescan the platform in RomM and search again",
				d.name, total, d.total)
		}
		if d.overBudget(total) {
			return d.budgetError(total)
		}
		if total > d.o.MaxBytes {
			return d.overMax()
		}
		d.total = total
	}
	return nil
}

// unsatisfiable is a 416: the partial file is complete when it is the file's size, else it is
// not a part of the file any more and the download starts again.
func (d *download) unsatisfiable(cr string) *attemptError {
	size := int64(-1)
	if rest, ok := strings.CutPrefix(strings.TrimSpace(cr), "bytes */"); ok {
		if n, err := strconv.ParseInt(rest, 10, 64); err == nil && n >= 0 {
			size = n
		}
	}
	want := d.f.SizeBytes
	if want == 0 {
		want = size
	}
	if d.have > 0 && want == d.have && (size < 0 || size == d.have) {
		d.total = d.have
		return nil
	}
	if d.have == 0 {
		return &attemptError{err: newError(ErrNotRomM, nil, "RomM answered 416 to the download of %s without a range: is cabinet.romm.url the RomM address?", d.name)}
	}
	if err := d.truncate(); err != nil {
		return &attemptError{err: err}
	}
	return &attemptError{restart: true}
}

// refused maps every status that is not the file.
func (d *download) refused(resp *http.Response) *attemptError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	body = d.c.redactBody(body)
	status := resp.StatusCode
	r := request{path: "/api/roms/" + strconv.Itoa(d.romID) + "/content/" + d.name, scope: "roms.read", version: d.v,
		notFound: "RomM has no file " + d.name + " for ROM " + strconv.Itoa(d.romID) + " any more: search again"}
	switch {
	case (status == http.StatusUnauthorized || status == http.StatusForbidden) && looksHTML(resp.Header.Get("Content-Type"), body):
		return &attemptError{err: newError(ErrNotRomM, nil,
			"the download of %s answered %d with a login or error page, not RomM's: a proxy in front of RomM stops the cabinet; let it through to RomM's /api, or point cabinet.romm.url at RomM itself",
			d.name, status)}
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return &attemptError{err: d.c.authError(r, status)}
	case status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout:
		// A proxy in front of a restarting RomM: worth another try.
		return &attemptError{err: newError(nil, nil, "RomM's proxy answered %d to the download of %s at byte %d of %s", status, d.name, d.have, d.size()), retry: true}
	case status == http.StatusNotFound:
		return &attemptError{err: newError(ErrNotFound, nil, "%s", r.notFound)}
	}
	return &attemptError{err: d.c.statusError(r, status, body)}
}

// copy streams body into dst through d.buf, writing every flushAt bytes.
func (d *download) copy(ctx, actx context.Context, body io.Reader, idle *time.Timer) *attemptError {
	limit := d.limit()
	if d.have > limit {
		return &attemptError{err: d.tooMuch()}
	}
	start := d.have
	filled := 0
	for {
		n, rerr := body.Read(d.buf[filled:])
		if n > 0 {
			idle.Reset(d.o.IdleTimeout)
		}
		filled += n
		over := d.have+int64(filled) > limit
		if over {
			filled = int(limit - d.have)
		}
		if filled > 0 && (filled >= flushAt || filled == len(d.buf) || rerr != nil || over) {
			if d.have == start && start == 0 && htmlPage(d.buf[:filled]) && !htmlName(d.f.Name) {
				return &attemptError{err: newError(ErrNotRomM, nil,
					"the download of %s answered with a web page, not RomM's file: a proxy or sign-in page in front of RomM stops the cabinet; let it through to RomM's /api", d.name)}
			}
			if _, err := d.dst.Write(d.buf[:filled]); err != nil {
				return &attemptError{err: d.writeError(err)}
			}
			d.have += int64(filled)
			filled = 0
			d.progress(false)
		}
		if over {
			return &attemptError{err: d.tooMuch()}
		}
		switch {
		case rerr == nil:
			continue
		case rerr == io.EOF:
			if d.total > 0 && d.have < d.total {
				return &attemptError{err: newError(ErrBadData, nil, "RomM ended the download of %s at byte %d of the %d it lists: the file changed in RomM; rescan the platform in RomM and search again",
					d.name, d.have, d.total)}
			}
			return nil
		default:
			return d.broken(ctx, actx, "the download of "+d.name+" broke off at byte "+strconv.FormatInt(d.have, 10)+" of "+d.size(), rerr)
		}
	}
}

// broken classifies a failed round trip or body read: the caller's context, the idle timeout,
// a dropped connection (retried), or something resuming will not fix.
func (d *download) broken(ctx, actx context.Context, what string, err error) *attemptError {
	if ctx.Err() != nil {
		return &attemptError{err: d.cancelled(ctx)}
	}
	if context.Cause(actx) == errIdle {
		return &attemptError{err: newError(nil, context.DeadlineExceeded, "RomM sent nothing for %s during the download of %s (at byte %d of %s)",
			d.o.IdleTimeout, d.name, d.have, d.size()), retry: true}
	}
	if _, ok := isRedirect(err); ok || !dropped(err) {
		return &attemptError{err: d.c.transportError(ctx, d.route(), nil, err)}
	}
	inner := err
	var ue *url.Error
	if errors.As(err, &ue) {
		inner = ue.Err // url.Error quotes the URL; only the cause is wanted
	}
	return &attemptError{err: newError(nil, nil, "%s (%s)", what, d.c.redactAll(untrusted.Clean(inner.Error(), 200), nil)), retry: true}
}

// dropped reports a connection that went away mid-answer: worth resuming.
func dropped(err error) bool {
	var ne net.Error
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE):
		return true
	case errors.As(err, &ne) && ne.Timeout():
		return true
	}
	// HTTP/2 reports a reset stream (a proxy restarting) as text only.
	return strings.Contains(err.Error(), "stream error")
}

func (d *download) truncate() error {
	if err := d.dst.Truncate(0); err != nil {
		return d.writeError(err)
	}
	if _, err := d.dst.Seek(0, io.SeekStart); err != nil {
		return d.writeError(err)
	}
	d.have, d.reported = 0, 0
	return nil
}

func (d *download) writeError(err error) error {
	return newError(nil, err, "download %s: write the file: %s", d.name, untrusted.Clean(err.Error(), 300))
}

// progress calls o.Progress every flushAt bytes or so, and at the end.
func (d *download) progress(final bool) {
	if d.o.Progress == nil || (!final && d.have-d.reported < flushAt) {
		return
	}
	d.reported = d.have
	d.o.Progress(d.have, d.total)
}

// parseContentRange reads "bytes start-end/total" ("*" total: -1).
func parseContentRange(s string) (start, total int64, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(s), "bytes ")
	if !found {
		return 0, 0, false
	}
	span, size, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	first, last, found := strings.Cut(span, "-")
	if !found {
		return 0, 0, false
	}
	start, err1 := strconv.ParseInt(first, 10, 64)
	end, err2 := strconv.ParseInt(last, 10, 64)
	if err1 != nil || err2 != nil || start < 0 || end < start {
		return 0, 0, false
	}
	if size == "*" {
		return start, -1, true
	}
	total, err := strconv.ParseInt(size, 10, 64)
	if err != nil || total <= end {
		return 0, 0, false
	}
	return start, total, true
}

// quote is text from an answer's headers made fit for an error: the token and anything shaped like
// one out first (a cap could cut a token past recognition), then cleaned and capped.
func (c *Client) quote(s string, max int) string { return cleanLine(c.redactAll(s, nil), max) }

func htmlType(ct string) bool { return strings.Contains(strings.ToLower(ct), "html") }

// htmlName: a file that is a web page itself (a browser game), which an HTML check must let by.
func htmlName(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".html") || strings.HasSuffix(n, ".htm")
}

// htmlPage spots a web page by its first bytes. Unlike looksHTML it does not take any '<' for
// one: a ROM may start with that byte.
func htmlPage(b []byte) bool {
	b = bytes.TrimLeft(b[:min(len(b), 512)], " \t\r\n\ufeff")
	for _, p := range []string{"<!doctype html", "<html", "<head", "<body"} {
		if len(b) >= len(p) && strings.EqualFold(string(b[:len(p)]), p) {
			return true
		}
	}
	return false
}

// ErrNoCover: RomM has no cover for the ROM (path_cover_large is empty: an unidentified ROM), or
// lists one it no longer has.
var ErrNoCover = errors.New("RomM has no cover for this ROM")

const (
	maxCover = 8 << 20
	// resourcesPath is where RomM's nginx serves its resources (config FRONTEND_RESOURCES_PATH).
	resourcesPath = "/assets/romm/resources/"
)

// coverType reports the images a cover may be.
func coverType(ct string) bool { return ct == "image/png" || ct == "image/jpeg" || ct == "image/gif" }

// Cover fetches r's large cover from RomM's own resources (never url_cover: that is IGDB or
// another host) with the token, as a proxy in front of RomM may want it. It returns the image,
// at most 8 MiB, and its type as sniffed: image/png, image/jpeg or image/gif, nothing else.
func (c *Client) Cover(ctx context.Context, r ROM) (data []byte, contentType string, err error) {
	name := cleanLine(r.Name, capName)
	if name == "" {
		name = "ROM " + strconv.Itoa(r.ID)
	}
	if r.CoverPath == "" {
		return nil, "", newError(ErrNoCover, nil, "RomM has no cover for %s: match the ROM to a metadata source in RomM to get one", name)
	}
	rel, ok := resourceRel(r.CoverPath)
	if !ok {
		return nil, "", newError(ErrBadData, nil, "RomM's cover path for %s is not one of RomM's own resources, so the cabinet does not fetch it", name)
	}
	v, err := c.require(ctx, "covers", 4, 0)
	if err != nil {
		return nil, "", err
	}
	route := "GET " + resourcesPath + c.redact(untrusted.Clean(rel, 200))
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := *c.base
	u.Path = c.base.Path + resourcesPath + rel
	u.RawPath = ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", newError(ErrInvalid, nil, "%s: build the request: check cabinet.romm.url", route)
	}
	req.Header.Set("User-Agent", "batocera-cabinet")
	req.Header.Set("Accept", "image/png, image/jpeg, image/gif")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, "", c.transportError(ctx, route, nil, err)
	}
	defer resp.Body.Close()
	ct := strings.ToLower(strings.TrimSpace(strings.Split(resp.Header.Get("Content-Type"), ";")[0]))
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		body = c.redactBody(body)
		rq := request{path: resourcesPath + rel, version: v}
		switch {
		case resp.StatusCode == http.StatusNotFound:
			return nil, "", newError(ErrNoCover, nil, "RomM lists a cover for %s but does not have it (404): refresh the ROM's metadata in RomM", name)
		case (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) && looksHTML(ct, body):
			return nil, "", newError(ErrNotRomM, nil,
				"%s answered %d with a login or error page: a proxy in front of RomM stops the cabinet; let it through to RomM's /assets, or point cabinet.romm.url at RomM itself",
				route, resp.StatusCode)
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			// nginx serves the resources: no scope of RomM's is involved, whatever the version.
			return nil, "", &AuthError{Status: resp.StatusCode, NoToken: c.token == ""}
		}
		return nil, "", c.statusError(rq, resp.StatusCode, body)
	}
	if resp.ContentLength > maxCover {
		return nil, "", newError(ErrTooLarge, nil, "RomM's cover for %s is larger than %d MiB: the cabinet shows covers up to that size", name, maxCover>>20)
	}
	if htmlType(ct) {
		return nil, "", newError(ErrNotRomM, nil, "%s answered with a web page, not the cover image: is cabinet.romm.url the RomM address (%s)?", route, c.base.Redacted())
	}
	if ct != "" && !coverType(ct) {
		return nil, "", newError(ErrBadData, nil, "RomM's cover for %s is %s, and the cabinet takes only PNG, JPEG or GIF covers", name, c.quote(ct, 60))
	}
	body, err := bounded.ReadBody(resp.Body, resp.ContentLength, maxCover)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", c.transportError(ctx, route, nil, err)
		}
		return nil, "", newError(nil, nil, "RomM's answer to %s was cut off (%s): retry; if it keeps happening, look at RomM's log or the proxy in front of it",
			route, c.redactAll(untrusted.Clean(err.Error(), 200), nil))
	}
	if len(body) > maxCover {
		return nil, "", newError(ErrTooLarge, nil, "RomM's cover for %s is larger than %d MiB: the cabinet shows covers up to that size", name, maxCover>>20)
	}
	if htmlPage(body) {
		return nil, "", newError(ErrNotRomM, nil, "%s answered with a web page, not the cover image: is cabinet.romm.url the RomM address (%s)?", route, c.base.Redacted())
	}
	sniffed := http.DetectContentType(body)
	if !coverType(sniffed) {
		return nil, "", newError(ErrBadData, nil, "RomM's cover for %s is not a PNG, JPEG or GIF image (its bytes read as %s)", name, sniffed)
	}
	return body, sniffed, nil
}

// resourceRel turns path_cover_large into a path below RomM's resources: rooted at
// /assets/romm/resources/ (RomM's models add FRONTEND_RESOURCES_PATH) or relative to it (older
// servers), without the ?ts= cache buster (a Python datetime, with a space in it). Anything that
// could leave the resources (another origin, "..", a rooted path elsewhere) is refused.
func resourceRel(p string) (string, bool) {
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	switch {
	case strings.HasPrefix(p, resourcesPath):
		p = p[len(resourcesPath):]
	case strings.HasPrefix(p, resourcesPath[1:]):
		p = p[len(resourcesPath)-1:]
	case strings.HasPrefix(p, "/"), strings.Contains(p, "://"):
		return "", false
	}
	if p == "" || strings.ContainsAny(p, "\\%") {
		return "", false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", false
		}
	}
	return p, true
}
