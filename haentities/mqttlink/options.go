// Package mqttlink owns Cabinet's connections to the MQTT broker (paho, MQTT
// 3.1.1): the hook's one-shot publish under a hard deadline (Publish, Dial)
// and the daemon's persistent Link with its last will, on-connect announce,
// Home Assistant birth handling, command subscriptions, reconnect with
// backoff and live reconfiguration. It publishes haentities.Message values
// as given and never logs or returns the broker password.
package mqttlink

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Defaults applied when an Options field is zero.
const (
	DefaultKeepAlive      = 30 * time.Second
	DefaultConnectTimeout = 10 * time.Second
)

// DaemonClientID is the default cabinet.mqtt.client_id: cabinet_<id>.
func DaemonClientID(cabinetID string) string { return "cabinet_" + cabinetID }

// HookClientID is a hook's client id, cabinet_<id>_h<pid>: distinct from the
// daemon's, so a hook never takes over (and knocks off) the daemon's session.
func HookClientID(cabinetID string, pid int) string {
	return DaemonClientID(cabinetID) + "_h" + strconv.Itoa(pid)
}

// Options say how to reach the broker. They map to cabinet.mqtt.* keys.
type Options struct {
	// Broker is cabinet.mqtt.broker: tcp:// or mqtt:// (plain, port 1883 by
	// default), ssl://, tls:// or mqtts:// (TLS, port 8883 by default), ws://
	// or wss:// (websocket; the path is kept). A bare host[:port] means tcp.
	Broker   string
	Username string
	Password string // never logged, never in an error
	ClientID string
	// CAFile is cabinet.mqtt.ca_file: PEM certificates trusted for a TLS
	// broker instead of the system roots.
	CAFile         string
	Will           *Will         // nil: no last will (hooks); the Link sets its own
	KeepAlive      time.Duration // default DefaultKeepAlive
	ConnectTimeout time.Duration // per attempt; default DefaultConnectTimeout; a sooner ctx deadline wins
}

// Will is a last will, published by the broker (QoS 1, retained) when the
// connection dies without a DISCONNECT.
type Will struct {
	Topic   string
	Payload []byte
}

// String describes the options without the password, so that a stray %v in
// a log line cannot leak it.
func (o Options) String() string {
	pw := ""
	if o.Password != "" {
		pw = " password=[set]"
	}
	return fmt.Sprintf("broker=%s user=%q%s client_id=%q", redactURL(o.Broker), o.Username, pw, o.ClientID)
}

// GoString is String for %#v.
func (o Options) GoString() string { return "mqttlink.Options{" + o.String() + "}" }

// Validate reports the first problem with the options, naming the key to fix.
// It does not read the CA file.
func (o Options) Validate() error {
	_, err := parseBroker(o.Broker)
	if err != nil {
		return err
	}
	if o.Will != nil && !validTopic(o.Will.Topic) {
		return fmt.Errorf("mqtt last will topic %q is not a valid topic name", o.Will.Topic)
	}
	return nil
}

// prepared is Options checked and completed for one connection attempt.
type prepared struct {
	Options
	url     *url.URL
	display string // URL without credentials, for errors
	tls     *tls.Config
}

func (o Options) prepare() (*prepared, error) {
	u, err := parseBroker(o.Broker)
	if err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	p := &prepared{Options: o, url: u, display: u.String()}
	if p.KeepAlive <= 0 {
		p.KeepAlive = DefaultKeepAlive
	}
	if p.ConnectTimeout <= 0 {
		p.ConnectTimeout = DefaultConnectTimeout
	}
	secure := u.Scheme == "ssl" || u.Scheme == "wss"
	if o.CAFile != "" && !secure {
		return nil, fmt.Errorf("cabinet.mqtt.ca_file is set but cabinet.mqtt.broker %s is not a TLS URL: use ssl://host:8883 or wss://", p.display)
	}
	if secure {
		p.tls = &tls.Config{MinVersion: tls.VersionTLS12}
		if o.CAFile != "" {
			pem, err := os.ReadFile(o.CAFile)
			if err != nil {
				return nil, fmt.Errorf("read cabinet.mqtt.ca_file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("cabinet.mqtt.ca_file %s holds no PEM certificate", o.CAFile)
			}
			p.tls.RootCAs = pool
		}
	}
	return p, nil
}

// parseBroker checks cabinet.mqtt.broker and returns it in the form paho
// dials: scheme tcp, ssl, ws or wss, with a port for tcp and ssl. The raw
// value is never echoed back when it carries credentials.
func parseBroker(raw string) (*url.URL, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return nil, fmt.Errorf("cabinet.mqtt.broker is empty: set it to tcp://host:1883 or ssl://host:8883")
	}
	if !strings.Contains(s, "://") {
		s = "tcp://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("cabinet.mqtt.broker %q is not a URL: use tcp://host:1883 or ssl://host:8883", redactURL(raw))
	}
	if u.User != nil {
		return nil, fmt.Errorf("cabinet.mqtt.broker must not carry credentials: use cabinet.mqtt.username and cabinet.mqtt.password")
	}
	port := ""
	switch strings.ToLower(u.Scheme) {
	case "tcp", "mqtt":
		u.Scheme, port = "tcp", "1883"
	case "ssl", "tls", "mqtts":
		u.Scheme, port = "ssl", "8883"
	case "ws", "wss":
		u.Scheme = strings.ToLower(u.Scheme)
	default:
		return nil, fmt.Errorf("cabinet.mqtt.broker %q: unsupported scheme %q: use tcp://, ssl://, ws:// or wss://", u.Redacted(), u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("cabinet.mqtt.broker %q has no host: use %s://host", u.Redacted(), u.Scheme)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("cabinet.mqtt.broker %q: port %q is not 1-65535", u.Redacted(), p)
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return nil, fmt.Errorf("cabinet.mqtt.broker %q has an empty port", u.Redacted())
	}
	if port != "" {
		if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("cabinet.mqtt.broker %q: a %s:// URL has no path or query", u.Redacted(), u.Scheme)
		}
		u.Path, u.RawPath, u.RawQuery, u.Fragment = "", "", "", ""
		if u.Port() == "" {
			u.Host = net.JoinHostPort(host, port)
		}
	}
	return u, nil
}

// redactURL hides the password part of a URL-looking string.
func redactURL(raw string) string {
	if u, err := url.Parse(strings.TrimSpace(raw)); err == nil && u.User != nil {
		u.User = url.User("redacted")
		return u.String()
	}
	if i := strings.LastIndex(raw, "@"); i >= 0 {
		return "…@" + raw[i+1:]
	}
	return raw
}

// validTopic reports whether s is a topic name one may publish to: not
// empty, no wildcards, no NUL, at most 65535 bytes.
func validTopic(s string) bool {
	return s != "" && len(s) <= 65535 && !strings.ContainsAny(s, "+#\x00")
}
