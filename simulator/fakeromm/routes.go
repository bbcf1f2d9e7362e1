package fakeromm

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

func (s *Server) routes() http.Handler {
	rt := &router{s: s}
	simple := func(v version) bool { return v.simpleRoute }
	rt.add("GET", "/openapi.json", nil, s.openapi)
	rt.add("GET", "/api/heartbeat", nil, s.heartbeat)
	rt.add("GET", "/api/stats", nil, s.stats)
	rt.add("GET", "/api/platforms", nil, s.listPlatforms)
	rt.add("GET", "/api/platforms/{id}", nil, s.getPlatform)
	rt.add("GET", "/api/roms", nil, s.listROMs)
	rt.add("GET", "/api/roms/by-hash", nil, s.romByHash)
	rt.add("GET", "/api/roms/{id}", nil, s.getROM)
	rt.add("GET", "/api/roms/{id}/simple", simple, s.getROMSimple)
	rt.add("GET|HEAD", "/api/roms/{id}/content/{file_name}", nil, s.romContent)
	rt.add("GET", "/api/roms/{id}/files/content/{file_name}", nil, s.romFileContent)
	rt.add("GET", "/api/collections", nil, s.listCollections)
	rt.add("GET", "/api/collections/virtual", nil, s.listVirtual)
	rt.add("GET", "/api/collections/smart", nil, s.listSmart)
	rt.add("GET", "/api/collections/{id}", nil, s.getCollection)
	rt.add("GET", "/api/collections/virtual/{id}", nil, s.getVirtual)
	rt.add("GET", "/api/collections/smart/{id}", nil, s.getSmart)
	rt.add("GET", "/api/firmware", nil, s.listFirmware)
	rt.add("GET", "/api/firmware/{id}", nil, s.getFirmware)
	rt.add("GET|HEAD", "/api/firmware/{id}/content/{file_name}", nil, s.firmwareContent)
	// nginx's static files, not RomM's API (so not in its OpenAPI document).
	rt.add("GET|HEAD", "/assets/romm/resources/roms/{platform_id}/{id}/cover/{file}", nil, s.coverAsset)
	s.writeRoutes(rt)
	return rt
}

// coverAsset serves a ROM's cover as nginx serves RomM's resources, behind
// the token rules of the downloads (a proxy in front of RomM may check the
// token); a file that is not there is nginx's HTML 404.
func (s *Server) coverAsset(c *call) {
	if !c.ready(ScopeRomsRead) {
		return
	}
	pid, err1 := strconv.Atoi(c.vars["platform_id"])
	id, err2 := strconv.Atoi(c.vars["id"])
	size, _ := strings.CutSuffix(c.vars["file"], ".png")
	r, ok := s.lib.meta(id)
	if err1 != nil || err2 != nil || !ok || r.PlatformID != pid || !s.lib.hasCover(r) || (size != "big" && size != "small") {
		nginxPage(c.w, http.StatusNotFound)
		return
	}
	c.w.Header().Set("Content-Type", "image/png")
	http.ServeContent(c.w, c.r, "", zipTime, bytes.NewReader(coverPNG(id, size)))
}

func (s *Server) openapi(c *call) {
	c.w.Header().Set("Content-Type", "application/json")
	c.w.Write(s.doc.body)
}

func (s *Server) heartbeat(c *call) {
	var fs []string
	for _, p := range s.lib.platforms {
		fs = append(fs, p.FSSlug)
	}
	sort.Strings(fs)
	writeJSON(c.w, http.StatusOK, map[string]any{
		"SYSTEM": map[string]any{"VERSION": s.opts.Version, "GIT_BRANCH": nil, "SHOW_SETUP_WIZARD": false},
		"METADATA_SOURCES": map[string]bool{"ANY_SOURCE_ENABLED": true, "IGDB_API_ENABLED": true,
			"SS_API_ENABLED": false, "SS_DEV_CREDENTIALS_SET": false, "MOBY_API_ENABLED": false,
			"STEAMGRIDDB_API_ENABLED": false, "RA_API_ENABLED": false, "LAUNCHBOX_API_ENABLED": false,
			"HASHEOUS_API_ENABLED": false, "PLAYMATCH_API_ENABLED": false, "TGDB_API_ENABLED": false,
			"FLASHPOINT_API_ENABLED": false, "HLTB_API_ENABLED": false, "DEMOZOO_API_ENABLED": false,
			"POUET_API_ENABLED": false, "CSDB_API_ENABLED": false, "STEAM_API_ENABLED": false, "LIBRETRO_API_ENABLED": false},
		"FILESYSTEM": map[string]any{"FS_PLATFORMS": fs, "TITLE_ID_EXTRACTION_ENABLED": false},
		"EMULATION": map[string]bool{"DISABLE_EMULATOR_JS": false, "DISABLE_RUFFLE_RS": false, "DISABLE_JSDOS": false,
			"DISABLE_PICO8": false},
		"FRONTEND": map[string]any{"DISABLE_USERPASS_LOGIN": false, "DISABLE_LOGS_VIEWER": false,
			"YOUTUBE_BASE_URL": "https://www.youtube.com"},
		"OIDC": map[string]any{"ENABLED": false, "AUTOLOGIN": false, "PROVIDER": "", "RP_INITIATED_LOGOUT": false},
		"TASKS": map[string]any{"ENABLE_SCHEDULED_RESCAN": false, "SCHEDULED_RESCAN_CRON": "0 3 * * *",
			"ENABLE_SCHEDULED_UPDATE_SWITCH_TITLEDB": false, "SCHEDULED_UPDATE_SWITCH_TITLEDB_CRON": "0 4 * * *",
			"ENABLE_SCHEDULED_UPDATE_LAUNCHBOX_METADATA": false, "SCHEDULED_UPDATE_LAUNCHBOX_METADATA_CRON": "0 4 * * *",
			"ENABLE_SCHEDULED_CONVERT_IMAGES_TO_WEBP": false, "SCHEDULED_CONVERT_IMAGES_TO_WEBP_CRON": "0 4 * * *"},
	})
}

func (s *Server) stats(c *call) {
	withPlatforms, _ := c.p.boolean("include_platform_stats", false)
	if !c.ready("") {
		return
	}
	var size int64
	platforms := 0
	for i := range s.lib.platforms {
		size += s.lib.platSize[i]
		if s.lib.platROMs[i] > 0 {
			platforms++
		}
	}
	out := map[string]any{"PLATFORMS": platforms, "ROMS": s.lib.romCount(), "SAVES": 0, "STATES": 0,
		"SCREENSHOTS": 0, "TOTAL_FILESIZE_BYTES": size}
	if withPlatforms {
		coverage := map[string][]map[string]any{}
		regions := map[string][]map[string]any{}
		for _, p := range s.lib.platforms {
			matched, byRegion := 0, map[string]int{}
			for _, r := range s.lib.fixture {
				if r.PlatformID != p.ID {
					continue
				}
				if r.IGDBID != 0 {
					matched++
				}
				for _, rg := range r.Regions {
					byRegion[rg]++
				}
			}
			key := fmt.Sprint(p.ID)
			coverage[key] = []map[string]any{{"source": "igdb", "matched": matched}}
			regions[key] = []map[string]any{}
			for _, rg := range sortedKeys(byRegion) {
				regions[key] = append(regions[key], map[string]any{"region": rg, "count": byRegion[rg]})
			}
		}
		out["METADATA_COVERAGE"], out["REGION_BREAKDOWN"] = coverage, regions
	}
	writeJSON(c.w, http.StatusOK, out)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (s *Server) listPlatforms(c *call) {
	c.p.str("updated_after") // declared; every row predates any sensible value
	if !c.ready(ScopePlatformsRead) {
		return
	}
	ps := append([]Platform(nil), s.lib.platforms...)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	out := make([]platformJSON, 0, len(ps))
	for _, p := range ps {
		out = append(out, s.platformJSON(p))
	}
	writeJSON(c.w, http.StatusOK, out)
}

func (s *Server) getPlatform(c *call) {
	id := c.p.pathInt("id", c.vars["id"], false)
	if !c.ready(ScopePlatformsRead) {
		return
	}
	p, ok := s.lib.platform(id)
	if !ok {
		writeDetail(c.w, http.StatusNotFound, fmt.Sprintf("Platform with id '%d' not found", id))
		return
	}
	writeJSON(c.w, http.StatusOK, s.platformJSON(p))
}

// romByID parses {id} and finds the ROM, answering 404 itself.
func (s *Server) romByID(c *call, scope string) (ROM, bool) {
	id := c.p.pathInt("id", c.vars["id"], true)
	if !c.ready(scope) {
		return ROM{}, false
	}
	r, ok := s.lib.rom(id)
	if !ok {
		writeDetail(c.w, http.StatusNotFound, fmt.Sprintf("Rom with id '%d' not found", id))
		return ROM{}, false
	}
	return r, true
}

func (s *Server) getROM(c *call) {
	if r, ok := s.romByID(c, ScopeRomsRead); ok {
		writeJSON(c.w, http.StatusOK, s.detailedROM(r))
	}
}

func (s *Server) getROMSimple(c *call) {
	if r, ok := s.romByID(c, ScopeRomsRead); ok {
		writeJSON(c.w, http.StatusOK, s.simpleROM(r, true))
	}
}

func (s *Server) romByHash(c *call) {
	want := map[string]string{}
	for _, k := range []string{"crc_hash", "md5_hash", "sha1_hash", "ra_hash"} {
		if v, ok := c.p.str(k); ok && v != "" {
			want[k] = strings.ToLower(v)
		}
	}
	if !c.ready(ScopeRomsRead) {
		return
	}
	if len(want) == 0 {
		writeDetail(c.w, http.StatusBadRequest, "At least one metadata hash value must be provided")
		return
	}
	match := func(h Hashes) bool {
		return (want["crc_hash"] != "" && h.CRC == want["crc_hash"]) ||
			(want["md5_hash"] != "" && h.MD5 == want["md5_hash"]) ||
			(want["sha1_hash"] != "" && h.SHA1 == want["sha1_hash"])
	}
	for id := 1; id <= s.lib.romCount(); id++ {
		r, _ := s.lib.rom(id)
		hit := r.Hashes != (Hashes{}) && match(r.Hashes)
		for _, f := range r.Files {
			hit = hit || (f.Hashes != (Hashes{}) && match(f.Hashes))
		}
		if hit {
			writeJSON(c.w, http.StatusOK, s.detailedROM(r))
			return
		}
	}
	writeDetail(c.w, http.StatusNotFound, "No ROM or file found with given hash values")
}

func (s *Server) listCollections(c *call) {
	c.p.str("updated_after")
	if !c.ready(ScopeCollectionsRead) {
		return
	}
	out := []collectionJSON{}
	for _, col := range s.lib.colls {
		out = append(out, s.collectionJSON(col))
	}
	writeJSON(c.w, http.StatusOK, out)
}

func (s *Server) getCollection(c *call) {
	id := c.p.pathInt("id", c.vars["id"], false)
	if !c.ready(ScopeCollectionsRead) {
		return
	}
	for _, col := range s.lib.colls {
		if col.id == id {
			writeJSON(c.w, http.StatusOK, s.collectionJSON(col))
			return
		}
	}
	writeDetail(c.w, http.StatusNotFound, fmt.Sprintf("Collection with id '%d' not found", id))
}

func (s *Server) listSmart(c *call) {
	c.p.str("updated_after")
	if !c.ready(ScopeCollectionsRead) {
		return
	}
	out := []smartCollectionJSON{}
	for _, col := range s.lib.smart {
		out = append(out, s.smartJSON(col))
	}
	writeJSON(c.w, http.StatusOK, out)
}

func (s *Server) getSmart(c *call) {
	id := c.p.pathInt("id", c.vars["id"], false)
	if !c.ready(ScopeCollectionsRead) {
		return
	}
	for _, col := range s.lib.smart {
		if col.id == id {
			writeJSON(c.w, http.StatusOK, s.smartJSON(col))
			return
		}
	}
	writeDetail(c.w, http.StatusNotFound, fmt.Sprintf("Collection with id '%d' not found", id))
}

func (s *Server) listVirtual(c *call) {
	typ := c.p.required("type")
	limit, limited := c.p.integer("limit", 0, nil, nil)
	if !c.ready(ScopeCollectionsRead) {
		return
	}
	out := []virtualCollectionJSON{}
	for _, v := range s.virtuals(typ) {
		if limited && len(out) >= limit {
			break
		}
		out = append(out, s.virtualJSON(v))
	}
	writeJSON(c.w, http.StatusOK, out)
}

func (s *Server) getVirtual(c *call) {
	id := c.vars["id"]
	if !c.ready(ScopeCollectionsRead) {
		return
	}
	// RomM answers an id that does not decode with a 500 (from_id raises);
	// the fake answers what a client can act on.
	if name, typ, ok := decodeVirtualID(id); ok {
		for _, v := range s.virtuals(typ) {
			if v.name == name {
				writeJSON(c.w, http.StatusOK, s.virtualJSON(v))
				return
			}
		}
	}
	writeDetail(c.w, http.StatusNotFound, fmt.Sprintf("Collection with id '%s' not found", id))
}

func (s *Server) listFirmware(c *call) {
	pid, byPlatform := c.p.integer("platform_id", 0, nil, nil)
	if !c.ready(ScopeFirmwareRead) {
		return
	}
	out := []firmwareJSON{}
	for _, f := range s.lib.firmware {
		if !byPlatform || f.PlatformID == pid {
			out = append(out, s.firmwareJSON(f))
		}
	}
	writeJSON(c.w, http.StatusOK, out)
}

func (s *Server) firmwareByID(c *call) (Firmware, bool) {
	id := c.p.pathInt("id", c.vars["id"], false)
	if !c.ready(ScopeFirmwareRead) {
		return Firmware{}, false
	}
	for _, f := range s.lib.firmware {
		if f.ID == id {
			return f, true
		}
	}
	writeDetail(c.w, http.StatusNotFound, fmt.Sprintf("Firmware with id '%d' not found", id))
	return Firmware{}, false
}

func (s *Server) getFirmware(c *call) {
	if f, ok := s.firmwareByID(c); ok {
		writeJSON(c.w, http.StatusOK, s.firmwareJSON(f))
	}
}
