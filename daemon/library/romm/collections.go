package romm

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
)

// Collection kinds.
const (
	KindRegular = "regular"
	KindSmart   = "smart"
	KindVirtual = "virtual"
)

// VirtualTypes are the type values RomM's /api/collections/virtual accepts (it requires one).
var VirtualTypes = []string{"all", "collection", "company", "franchise", "genre", "mode"}

// maxVirtual is the limit sent for virtual collections: every genre, company and franchise is
// one, each with its full rom_ids list, so "all" can be very large on a big library.
const maxVirtual = 500

// Collection is a RomM collection. Its ROMs are read with SearchROMs (CollectionID,
// SmartCollectionID or VirtualCollectionID), never from RomM's rom_ids list.
type Collection struct {
	ID          string // the number as text for regular and smart, RomM's string id for virtual
	Kind        string // regular, smart or virtual
	Name        string
	Description string // multi-line, at most 2000 runes
	ROMCount    int
}

// Collections lists the collections of one kind: "regular" (or ""), "smart", "virtual" (type
// "all") or "virtual:<type>" with a type from VirtualTypes. Virtual collections exist from 4.0,
// smart ones from 4.1 (collections.py at those tags).
func (c *Client) Collections(ctx context.Context, kind string) ([]Collection, error) {
	r := request{max: maxJSON, scope: "collections.read"}
	var k string
	var major, minor int
	switch {
	case kind == "" || kind == KindRegular:
		k, r.path, major, minor = KindRegular, "/api/collections", 4, 0
	case kind == KindSmart:
		k, r.path, major, minor = KindSmart, "/api/collections/smart", 4, 1
	case kind == KindVirtual || len(kind) > len(KindVirtual)+1 && kind[:len(KindVirtual)+1] == KindVirtual+":":
		typ := "all"
		if kind != KindVirtual {
			typ = kind[len(KindVirtual)+1:]
		}
		if !validVirtualType(typ) {
			return nil, newError(ErrInvalid, nil, "virtual collection type %q is not one of %v", cleanLine(typ, 30), VirtualTypes)
		}
		k, r.path, major, minor = KindVirtual, "/api/collections/virtual", 4, 0
		r.query = url.Values{"type": {typ}, "limit": {strconv.Itoa(maxVirtual)}}
	default:
		return nil, newError(ErrInvalid, nil, "collection kind %q is not regular, smart or virtual", cleanLine(kind, 30))
	}
	v, err := c.require(ctx, k+" collections", major, minor)
	if err != nil {
		return nil, err
	}
	r.version = v
	body, err := c.fetch(ctx, r)
	if err != nil {
		return nil, err
	}
	return decodeCollections(body, k)
}

// Collection reads one collection by kind and id (as Collections gives them).
func (c *Client) Collection(ctx context.Context, kind, id string) (Collection, error) {
	r := request{max: maxJSON, scope: "collections.read"}
	var major, minor int
	switch kind {
	case KindRegular, "":
		kind, major, minor = KindRegular, 4, 0
		n, err := strconv.Atoi(id)
		if err != nil || n <= 0 || n > 1<<31-1 {
			return Collection{}, newError(ErrInvalid, nil, "collection id %q is not a RomM collection id (a positive number): take it from the collection list", cleanLine(id, 30))
		}
		r.path = "/api/collections/" + strconv.Itoa(n)
	case KindSmart:
		major, minor = 4, 1
		n, err := strconv.Atoi(id)
		if err != nil || n <= 0 || n > 1<<31-1 {
			return Collection{}, newError(ErrInvalid, nil, "smart collection id %q is not a RomM id (a positive number): take it from the collection list", cleanLine(id, 30))
		}
		r.path = "/api/collections/smart/" + strconv.Itoa(n)
	case KindVirtual:
		major, minor = 4, 0
		if id == "" || !virtualIDOK(id) {
			return Collection{}, newError(ErrInvalid, nil, "virtual collection id is not one RomM issues: take it from the collection list")
		}
		r.path = "/api/collections/virtual/" + id // urlsafe base64 needs no escaping
	default:
		return Collection{}, newError(ErrInvalid, nil, "collection kind %q is not regular, smart or virtual", cleanLine(kind, 30))
	}
	v, err := c.require(ctx, kind+" collections", major, minor)
	if err != nil {
		return Collection{}, err
	}
	r.version = v
	r.notFound = "RomM has no " + kind + " collection with that id (or hides it from this token's user): list the collections again"
	body, err := c.fetch(ctx, r)
	if err != nil {
		return Collection{}, err
	}
	return decodeCollection(body, kind)
}

func validVirtualType(t string) bool {
	for _, v := range VirtualTypes {
		if t == v {
			return true
		}
	}
	return false
}

type rawCollection struct {
	ID          json.RawMessage `json:"id"` // int for regular and smart, string for virtual
	Name        string          `json:"name"`
	Description *string         `json:"description"`
	ROMCount    int64           `json:"rom_count"`
	// rom_ids is deliberately absent: it can hold every ROM id of the library.
}

// decodeCollections decodes a list of collections of one kind.
func decodeCollections(body []byte, kind string) ([]Collection, error) {
	var raw []rawCollection
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, newError(ErrBadData, nil, "read RomM's %s collections: %s", kind, jsonProblem(err))
	}
	if len(raw) > maxCollections {
		return nil, newError(ErrBadData, nil, "RomM listed %d collections, more than the %d the cabinet reads", len(raw), maxCollections)
	}
	out := make([]Collection, 0, len(raw))
	for i := range raw {
		col, ok := raw[i].project(kind)
		if !ok {
			return nil, newError(ErrBadData, nil, "RomM's %s collection %d has an impossible id or rom_count", kind, i)
		}
		out = append(out, col)
	}
	return out, nil
}

// decodeCollection decodes one collection of a kind.
func decodeCollection(body []byte, kind string) (Collection, error) {
	var raw *rawCollection
	if err := json.Unmarshal(body, &raw); err != nil {
		return Collection{}, newError(ErrBadData, nil, "read RomM's %s collection: %s", kind, jsonProblem(err))
	}
	if raw == nil {
		return Collection{}, newError(ErrBadData, nil, "RomM answered null for the %s collection: list the collections again", kind)
	}
	col, ok := raw.project(kind)
	if !ok {
		return Collection{}, newError(ErrBadData, nil, "RomM's %s collection has an impossible id or rom_count", kind)
	}
	return col, nil
}

func (rc *rawCollection) project(kind string) (Collection, bool) {
	id, ok := collectionID(rc.ID, kind)
	count, okCount := asCount(rc.ROMCount)
	if !ok || !okCount {
		return Collection{}, false
	}
	return Collection{
		ID:          id,
		Kind:        kind,
		Name:        cleanLine(rc.Name, capName),
		Description: cleanText(deref(rc.Description), capDescription),
		ROMCount:    count,
	}, true
}

func collectionID(raw json.RawMessage, kind string) (string, bool) {
	if kind == KindVirtual {
		var s string
		if json.Unmarshal(raw, &s) != nil || !virtualIDOK(s) {
			return "", false
		}
		return s, true
	}
	var n int64
	if json.Unmarshal(raw, &n) != nil {
		return "", false
	}
	id, ok := asID(n)
	return strconv.Itoa(id), ok
}
