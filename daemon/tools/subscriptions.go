package tools

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Resource subscriptions (issue 31), in both protocol eras:
//   - 2025-11-25: resources/subscribe and resources/unsubscribe on a session; the updates travel
//     on the session's channel (over HTTP its GET stream, over the socket the connection).
//   - 2026-07-28: subscriptions/listen {resourceSubscriptions}; the updates travel on that
//     request's own stream, each tagged with its id (_meta io.modelcontextprotocol/subscriptionId).
//
// mcp-go answers both requests but remembers neither (no session of its own keeps resource
// subscriptions, and its broadcast drops resources/updated on listen streams), so the server
// keeps them here, from its hooks, and writes each update to the subscriber's channel itself.
// The daemon says what changed (ResourcesChanged) from its engine's state: nothing polls ES.

// Bounds of the subscriptions.
const (
	// maxSubscribers bounds the sessions and listen streams with subscriptions, together.
	maxSubscribers = 256
	// maxPerClient bounds those of one client: one token over HTTP, one session on the cabinet.
	maxPerClient = 16
)

// subscribable are the resources that change while a client watches, and so can be subscribed
// to; a subscription to anything else is accepted (mcp-go answers it) and never fires.
func subscribable() []string {
	return []string{ResourceNowPlaying, ResourceArtwork, ResourceStatus, ResourcePlayedToday, ResourcePlayedWeek, ResourceSystems}
}

// subKey is one subscriber: a session (2025-11-25, listen "") or one listen request of a session
// (2026-07-28: the request's id, as JSON-RPC gave it).
type subKey struct {
	sess   server.ClientSession
	listen string
}

type subscriber struct {
	id     any    // the listen request's id, for the tag; nil for a session's subscriptions
	client string // who subscribed (maxPerClient)
	uris   []string
}

type subscriptions struct {
	mu   sync.Mutex
	subs map[subKey]*subscriber
	// dropped counts the updates a subscriber's full channel could not take (it reads too slowly
	// or has gone): the next change tells it again.
	dropped atomic.Int64
}

func newSubscriptions() *subscriptions { return &subscriptions{subs: map[subKey]*subscriber{}} }

// hooks are the mcp-go hooks that keep the subscriptions.
func (r *subscriptions) hooks() *server.Hooks {
	h := &server.Hooks{}
	h.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil && mayRead(ctx, req.Header) {
			r.add(subKey{sess: sess}, nil, subscriberOf(ctx, sess), []string{req.Params.URI})
		}
	})
	h.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			r.remove(subKey{sess: sess}, req.Params.URI)
		}
	})
	h.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) { r.drop(sess) })
	h.AddBeforeSubscriptionsListen(func(ctx context.Context, id any, req *mcp.SubscriptionsListenRequest) {
		sess := server.ClientSessionFromContext(ctx)
		if sess == nil || id == nil || !mayRead(ctx, req.Header) {
			return
		}
		r.add(subKey{sess: sess, listen: listenID(id)}, id, subscriberOf(ctx, sess), req.Params.Notifications.ResourceSubscriptions)
	})
	h.AddAfterSubscriptionsListen(func(ctx context.Context, id any, _ *mcp.SubscriptionsListenRequest, _ *mcp.SubscriptionsListenResult) {
		r.endListen(ctx, id)
	})
	h.AddOnError(func(ctx context.Context, id any, method mcp.MCPMethod, _ any, _ error) {
		if method == mcp.MethodSubscriptionsListen {
			r.endListen(ctx, id)
		}
	})
	return h
}

// mayRead is whether the caller may read resources, subscribe or complete: a local caller may; a
// client over HTTP needs the read scope (a request with headers and no scopes in its context has
// none; the completion providers get no headers).
func mayRead(ctx context.Context, header map[string][]string) bool {
	have, local := scopesFrom(ctx)
	return (local && len(header) == 0) || slices.Contains(have, ScopeRead)
}

// subscriberOf is who subscribes: the token over HTTP (each of its 2026-07-28 requests is a session of
// its own), else the session.
func subscriberOf(ctx context.Context, sess server.ClientSession) string {
	if name := callerName(ctx); name != "" {
		return "token " + name
	}
	return "session " + sess.SessionID()
}

func listenID(id any) string {
	b, _ := mcp.NewRequestId(id).MarshalJSON()
	return string(b)
}

func (r *subscriptions) endListen(ctx context.Context, id any) {
	if sess := server.ClientSessionFromContext(ctx); sess != nil && id != nil {
		r.mu.Lock()
		delete(r.subs, subKey{sess: sess, listen: listenID(id)})
		r.mu.Unlock()
	}
}

// add records uris for k, the subscribable ones only, once each; past the bounds it records
// nothing (the client is acknowledged, as mcp-go answers it, and never told).
func (r *subscriptions) add(k subKey, id any, client string, uris []string) {
	known := subscribable()
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.subs[k]
	if s == nil {
		mine := 0
		for _, o := range r.subs {
			if o.client == client {
				mine++
			}
		}
		if len(r.subs) >= maxSubscribers || mine >= maxPerClient {
			return
		}
		s = &subscriber{id: id, client: client}
	}
	for _, u := range uris {
		if slices.Contains(known, u) && !slices.Contains(s.uris, u) {
			s.uris = append(s.uris, u)
		}
	}
	if len(s.uris) > 0 {
		r.subs[k] = s
	}
}

func (r *subscriptions) remove(k subKey, uri string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.subs[k]; s != nil {
		s.uris = slices.DeleteFunc(s.uris, func(u string) bool { return u == uri })
		if len(s.uris) == 0 {
			delete(r.subs, k)
		}
	}
}

// drop forgets everything of a session that has ended.
func (r *subscriptions) drop(sess server.ClientSession) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.subs {
		if k.sess == sess {
			delete(r.subs, k)
		}
	}
}

// count is the number of subscribers (sessions and listen streams).
func (r *subscriptions) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.subs)
}

// changed tells every subscriber of one of uris, in the order of uris. It never blocks: a
// subscriber whose channel is full misses this update.
func (r *subscriptions) changed(uris ...string) {
	type delivery struct {
		sess server.ClientSession
		n    mcp.JSONRPCNotification
	}
	var out []delivery
	r.mu.Lock()
	for k, s := range r.subs {
		for _, u := range uris {
			if slices.Contains(s.uris, u) {
				out = append(out, delivery{k.sess, updated(u, s.id)})
			}
		}
	}
	r.mu.Unlock()
	for _, d := range out {
		if d.n.Params.Meta != nil && !listening(d.sess) {
			continue // the listen's acknowledgement comes first; it has not gone yet
		}
		select {
		case d.sess.NotificationChannel() <- d.n:
		default:
			r.dropped.Add(1)
		}
	}
}

// listening is whether a session's listen stream is acknowledged (sessions that keep no filter,
// such as mcp-go's stdio one, are taken as acknowledged).
func listening(sess server.ClientSession) bool {
	f, ok := sess.(server.SessionWithSubscriptionFilter)
	if !ok {
		return true
	}
	_, active := f.SubscriptionFilter()
	return active
}

// updated is notifications/resources/updated for uri, tagged with the listen request's id when
// there is one.
func updated(uri string, id any) mcp.JSONRPCNotification {
	p := mcp.NotificationParams{AdditionalFields: map[string]any{"uri": uri}}
	if id != nil {
		p.Meta = map[string]any{mcp.MetaKeySubscriptionID: id}
	}
	return mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: string(mcp.MethodNotificationResourceUpdated), Params: p}}
}
