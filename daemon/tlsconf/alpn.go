//go:build !nethttpomithttp2

package tlsconf

// alpn is what the server offers in the TLS handshake: HTTP/2, which net/http serves, and
// HTTP/1.1.
var alpn = []string{"h2", "http/1.1"}
