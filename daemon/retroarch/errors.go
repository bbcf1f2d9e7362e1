package retroarch

import "errors"

// Guidance is what a user must do when RetroArch does not answer. Silence and
// a refused port look the same from here: no game is running (RetroArch has no
// command socket without one), or network commands are off.
const Guidance = "RetroArch is not running a game, or network commands are off — " +
	"add `global.retroarch.network_cmd_enable=true` to /userdata/system/batocera.conf"

var (
	// ErrNotRunning matches (errors.Is) every *NotAnsweringError; its message
	// is exactly Guidance.
	ErrNotRunning = errors.New(Guidance)
	// ErrUnsupported is wrapped when GET_CONFIG_PARAM answers "unsupported":
	// this RetroArch does not know the setting.
	ErrUnsupported = errors.New("this RetroArch does not support reading the setting")
	// ErrInvalidMessage is wrapped by ShowMessage and ValidateMessage for text
	// that cannot be sent as one safe SHOW_MSG line.
	ErrInvalidMessage = errors.New("message cannot be shown")
	// ErrInvalidCommand is returned for a Command or ConfigName value that is
	// not one of the package's constants.
	ErrInvalidCommand = errors.New("not an allowed RetroArch command")
	// errBadReply marks a datagram that has the expected prefix but cannot be
	// parsed.
	errBadReply = errors.New("malformed reply")
)

// NotAnsweringError reports that RetroArch did not answer: the port was
// refused (nothing listens) or no matching reply came before the deadline.
// Its message starts with Guidance.
type NotAnsweringError struct {
	Addr    string // where the command went, e.g. "127.0.0.1:55355"
	Command string // wire name of the command, without its argument
	Refused bool   // true: the port was refused; false: silence until the deadline
}

func (e *NotAnsweringError) Error() string {
	how := "no reply from " + e.Addr + " to " + e.Command
	if e.Refused {
		how = "nothing listens on " + e.Addr
	}
	return Guidance + " (" + how + ")"
}

// Is makes errors.Is(err, ErrNotRunning) true.
func (e *NotAnsweringError) Is(target error) bool { return target == ErrNotRunning }
