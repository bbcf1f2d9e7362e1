//go:build !linux

package mqttlink

import "net"

// quickAck is Linux-only; elsewhere the connection is used as is.
func quickAck(conn net.Conn) net.Conn { return conn }
