package argv

import "strings"

// keptEscaped are the characters of ES's getEscapedPath set
// (\ '"!$^&*(){}[]?;<>) whose backslash survives sh inside double quotes.
// Inside quotes sh turns \\ into \ and \$ into $ (and ES deleted every "
// before), so an arriving backslash before \ or $ is the file name's own.
const keptEscaped = " '!^&*(){}[]?;<>"

// UnescapePath undoes what ES does to game-start's first argument.
//
// ES escapes the path with getEscapedPath and then, because the result
// contains a space, wraps it in double quotes and runs the line with sh -c.
// Inside double quotes sh keeps most backslashes, so the script receives
// `/userdata/roms/nes/Super\ Mario\ Bros.\ \(World\).nes`. Without a space
// the argument is unquoted and sh already removed the backslashes, so it
// arrives intact and is returned unchanged.
func UnescapePath(arg string) string {
	if !strings.Contains(arg, " ") || !strings.Contains(arg, `\`) {
		return arg
	}
	var b strings.Builder
	b.Grow(len(arg))
	for i := 0; i < len(arg); i++ {
		c := arg[i]
		if c == '\\' && i+1 < len(arg) && strings.IndexByte(keptEscaped, arg[i+1]) >= 0 {
			b.WriteByte(arg[i+1])
			i++
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
