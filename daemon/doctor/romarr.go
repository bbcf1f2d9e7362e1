package doctor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
)

// ROMarr is what the check asks the household's ROMarr (romarr.Client):
// its status, which needs the API key.
type ROMarr interface {
	Status(ctx context.Context) (romarr.Status, error)
}

// ROMarrEnv is cabinet.romarr.* as the check sees it. URL "" means ROMarr
// is not configured (it is optional); Err is why cabinet.romarr.* cannot
// make a client. The key itself never reaches the check: HasKey only says
// whether one is set.
type ROMarrEnv struct {
	URL    string
	Client ROMarr
	Err    error
	HasKey bool
}

// CheckROMarr is the ROMarr check's name.
const CheckROMarr = "romarr"

const romarrKeyHint = "set cabinet.romarr.api_key_file to a file holding the API key shown under ROMarr's Settings → General " +
	"(or the ROMARR_API_KEY it was started with)"

func checkROMarr(ctx context.Context, r ROMarrEnv) Result {
	switch {
	case r.URL == "":
		return Result{Status: Skip, Detail: "cabinet.romarr.url is not set (optional: the romarr_* tools need it)"}
	case r.Err != nil:
		return Result{Status: Fail, Detail: r.Err.Error(), Hint: "fix cabinet.romarr.*; `cabinet config` shows every value and its source"}
	}
	st, err := r.Client.Status(ctx)
	switch {
	case errors.Is(err, romarr.ErrUnauthorized):
		return Result{Status: Fail, Detail: fmt.Sprintf("ROMarr at %s answers but refused the API key", r.URL), Hint: romarrKeyHint}
	case err != nil:
		return Result{Status: Fail, Detail: err.Error(),
			Hint: fmt.Sprintf("check cabinet.romarr.url (%s), such as http://nas.lan:6868, and that ROMarr runs and the cabinet can reach it", r.URL)}
	}
	facts := []string{fmt.Sprintf("%d platforms, %d wanted, %d queued, %d indexers", st.Platforms, st.Wanted, st.Queued, st.Indexers)}
	for _, l := range st.Libraries {
		facts = append(facts, fmt.Sprintf("library %s (%s): %s", l.Name, l.Type, answers(l.OK, l.Detail)))
	}
	for _, d := range st.DownloadClients {
		facts = append(facts, fmt.Sprintf("download client %s (%s): %s", d.Name, d.Protocol, answers(d.OK, d.Detail)))
	}
	if st.IndexerError != "" {
		facts = append(facts, "indexers: "+st.IndexerError)
	}
	how := "and takes the API key"
	if !r.HasKey {
		how = "without an API key (its authentication is off)"
	}
	return Result{Status: OK, Detail: fmt.Sprintf("ROMarr %s answers at %s %s", st.Version, r.URL, how), Facts: facts}
}

func answers(ok bool, detail string) string {
	s := "answers"
	if !ok {
		s = "does not answer"
	}
	if detail = strings.TrimSpace(detail); detail != "" {
		s += ": " + detail
	}
	return s
}
