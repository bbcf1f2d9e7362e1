package household

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// maxText is the longest message: what RetroArch's SHOW_MSG and ES's
// notifications take on one line (retroarch.MaxMessageRunes).
const maxText = 200

// maxGameName bounds a game's name inside a message.
const maxGameName = 60

// gameLabel is a game's name cleaned for the screen (it comes from a game
// list: untrusted).
func gameLabel(name string) string {
	if n := untrusted.Clean(name, maxGameName); n != "" {
		return n
	}
	return "The game"
}

// minutesText is "1 minute", "22 minutes" (rounded up: "0:40" left is "1 minute").
func minutesText(d time.Duration) string {
	n := int((d + time.Minute - 1) / time.Minute)
	if n == 1 {
		return "1 minute"
	}
	return fmt.Sprintf("%d minutes", n)
}

// leftText is how much time is left and why: "22 minutes of play left today".
func leftText(st Status) string {
	switch st.EndBy {
	case EndSession:
		return minutesText(st.Remaining) + " left for this game"
	case EndBedtime:
		return "Bedtime in " + minutesText(st.Remaining)
	}
	return minutesText(st.Remaining) + " of play left today"
}

// saveAdvice is what the player should know about their progress.
func saveAdvice(r Rules, plan SavePlan) string {
	switch {
	case r.AtLimit == WarnOnly:
		return ""
	case r.AtLimit == SaveQuit && plan.Saves():
		return ": the game will be saved and closed"
	}
	return ": save your game now, it will be closed"
}

// startText is shown when a game starts under a limit.
func startText(st Status) string { return fit(leftText(st) + ".") }

// warnText is a warning point's message.
func warnText(r Rules, st Status, plan SavePlan) string {
	return fit(leftText(st) + saveAdvice(r, plan) + ".")
}

// upText is shown over the game when the time is up (warn_only repeats it).
func upText(st Status) string {
	switch st.EndBy {
	case EndPaused:
		return "Play is paused."
	case EndBedtime:
		return "It's bedtime."
	case EndSession:
		return "Time is up for this game."
	}
	return "Time is up for today."
}

// endedText is the notification after a game was ended at the limit.
func endedText(st Status, game string, e Ending) string {
	what := gameLabel(game) + " was closed"
	switch {
	case e.Saved:
		what = gameLabel(game) + " was saved and closed"
	case e.SaveNote != "":
		what += " (" + e.SaveNote + ")"
	}
	next := st.Refusal
	if next == "" {
		next = "Another game can start now."
	}
	// The reason comes once: "Zelda was saved and closed. Time is up for
	// today. Play again tomorrow from 07:00."
	if first := upText(st); !strings.HasPrefix(next, strings.TrimSuffix(first, ".")) {
		what = first + " " + what
	}
	return fit(what + ". " + next)
}

// refusedText is the notification after a launch was ended.
func refusedText(st Status, game string) string {
	return fit(gameLabel(game) + " can't start now. " + st.Refusal)
}

// fit caps a message at maxText runes.
func fit(s string) string {
	if utf8.RuneCountInString(s) <= maxText {
		return s
	}
	r := []rune(s)
	return string(r[:maxText-1]) + "…"
}
