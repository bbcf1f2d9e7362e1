package romm

import (
	"context"
	"net/url"
)

// ROMByHash finds the ROM whose file has one of the given hashes (GET /api/roms/by-hash, roms.read,
// 4.5+); pass "" for a hash not known. RomM matches any of them, on the ROM or on one of its files,
// and answers the first match (roms_handler.get_rom_by_hash), so a CRC alone may name another
// game's file: check the returned ROM's hashes when it matters. No match is ErrNotFound.
func (c *Client) ROMByHash(ctx context.Context, crcHash, md5Hash, sha1Hash string) (ROM, error) {
	q := url.Values{}
	for _, h := range []struct {
		key, value, norm, what string
	}{
		{"crc_hash", crcHash, crc(crcHash), "8"},
		{"md5_hash", md5Hash, md5(md5Hash), "32"},
		{"sha1_hash", sha1Hash, sha1(sha1Hash), "40"},
	} {
		if h.value == "" {
			continue
		}
		if h.norm == "" {
			return ROM{}, newError(ErrInvalid, nil, "find a ROM by hash: the %s is not %s hex digits", h.key, h.what)
		}
		q.Set(h.key, h.norm)
	}
	if len(q) == 0 {
		return ROM{}, newError(ErrInvalid, nil, "find a ROM by hash: give a CRC32, MD5 or SHA-1")
	}
	v, err := c.require(ctx, "lookup by hash", 4, 5)
	if err != nil {
		return ROM{}, err
	}
	body, err := c.fetch(ctx, request{path: "/api/roms/by-hash", query: q, max: maxJSON, scope: "roms.read", version: v,
		notFound: "RomM has no ROM with these hashes (or hides it from this token's user)"})
	if err != nil {
		return ROM{}, err
	}
	return decodeROM(body)
}
