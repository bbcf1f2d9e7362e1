//go:build nethttpomithttp2

package tlsconf

// alpn offers HTTP/1.1 only: release builds leave HTTP/2 out of net/http (the nethttpomithttp2
// tag, half a MiB of the binary), and a client told h2 would then get no answer. MCP's
// Streamable HTTP needs nothing of HTTP/2.
var alpn = []string{"http/1.1"}
