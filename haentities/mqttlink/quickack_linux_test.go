package mqttlink

import (
	"crypto/tls"
	"net"
	"net/url"
	"testing"
	"time"
)

// Every tcp:// and ssl:// connection must flush delayed ACKs (see
// openConnection); the figures are in BenchmarkPublishOneShot/mosquitto.
func TestConnectionsUseQuickAck(t *testing.T) {
	plain, _ := silentBroker(t)
	_, cert := testCA(t)
	secure := tlsFront(t, plain, cert)
	p, err := Options{Broker: "tcp://" + plain}.prepare()
	if err != nil {
		t.Fatal(err)
	}
	if co := p.clientOptions(time.Second, time.Now().Add(time.Second)); co.CustomOpenConnectionFn == nil {
		t.Fatalf("paho options do not use openConnection")
	}
	tests := []struct{ name, url string }{{"tcp", "tcp://" + plain}, {"ssl", "ssl://" + secure}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, _ := url.Parse(tc.url)
			p, _ := Options{Broker: tc.url}.prepare()
			co := p.clientOptions(time.Second, time.Now().Add(time.Second))
			co.TLSConfig = &tls.Config{InsecureSkipVerify: true}
			conn, err := openConnection(u, *co)
			if err != nil {
				t.Fatalf("openConnection: %v", err)
			}
			defer conn.Close()
			if tc, ok := conn.(*tls.Conn); ok {
				conn = tc.NetConn()
			}
			if _, ok := conn.(*quickAckConn); !ok {
				t.Errorf("connection is a %T, want *quickAckConn", conn)
			}
		})
	}
}

var _ net.Conn = (*quickAckConn)(nil)
