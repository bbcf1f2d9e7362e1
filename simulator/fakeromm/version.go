package fakeromm

import "fmt"

// version is what a RomM release can do, from the get_roms signature and
// the routes at each tag of rommapp/romm (romm-api.md §5.1, §9).
type version struct {
	name string
	// withFiles: the with_files flag (4.9+); before it, list items carry files.
	withFiles bool
	// simpleRoute: GET /api/roms/{id}/simple (5.0+).
	simpleRoute bool
	// withRomIDIndex: the with_rom_id_index flag (5.1+).
	withRomIDIndex bool
	// withTotal: the with_total flag and a nullable total (5.2+).
	withTotal bool
	// split401: 401 + WWW-Authenticate for no credentials, 403 for a
	// missing scope (5.2+, decorators/auth.py _raise_auth_error); before,
	// Starlette's requires() answered 403 for both.
	split401 bool
	// has5Filters: has_saves, has_states, has_soundtrack, tags,
	// metadata_providers (5.0+).
	has5Filters bool
	// has53Filters: publishers, developers, physical (in the 5.3.1
	// document's get_roms, not the 5.1.0 one).
	has53Filters bool
}

func parseVersion(v string) (version, error) {
	switch v {
	case Version480:
		return version{name: v}, nil
	case Version500:
		return version{name: v, withFiles: true, simpleRoute: true, has5Filters: true}, nil
	case Version510:
		return version{name: v, withFiles: true, simpleRoute: true, has5Filters: true, withRomIDIndex: true}, nil
	case Version531, VersionDevelopment:
		// "development" is what get_version() reports for a build without
		// a version: a checkout of main, so the newest behaviour.
		return version{name: v, withFiles: true, simpleRoute: true, has5Filters: true, withRomIDIndex: true,
			withTotal: true, split401: true, has53Filters: true}, nil
	}
	return version{}, fmt.Errorf("fakeromm: Options.Version %q is not one of %s, %s, %s, %s, %s",
		v, Version480, Version500, Version510, Version531, VersionDevelopment)
}
