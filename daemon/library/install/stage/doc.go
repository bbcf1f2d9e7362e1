// Package stage owns how a game from the household's RomM server is written
// into /userdata/roms/<system>/ so that EmulationStation never lists a partial
// or unverified set.
//
// It is pure filesystem code. The installer (another package) asks Begin for a
// Stage, downloads each file to the path PartPath gives it, verifies the bytes,
// and calls Commit, which moves the whole set into the system folder with one
// rename per visible entry. A crash leaves only a
// "<system>/.cabinet-install-<key>/" folder behind, which Leftovers finds.
//
// # Why a dot folder inside the system folder
//
// The stage sits on the same filesystem as its target, so the final move is a
// rename, never a copy. Batocera's EmulationStation never lists it:
// populateFolder skips hidden entries unless ShowHiddenFiles is on (off by
// default), and it never descends into a folder whose name starts with '.'
// whatever that setting says (batocera-emulationstation es-app/src/SystemData.cpp
// lines 332-334 and 386; es-core/src/Settings.cpp line 134). The
// ".cabinet-part" suffix on files still downloading is a second guard for
// anything else that scans the share.
//
// # Batocera and multi-disc games
//
// Read in batocera-linux/batocera-emulationstation at commit 71dd88b9:
//
//   - A .m3u, .cue, .ccd or .gdi game "has content files" when its extension
//     is valid for the system and the system accepts more than one extension
//     (es-app/src/FileData.cpp lines 806-815).
//   - For a .m3u, the content files are its lines, trimmed, skipping empty
//     lines and lines starting with '#'; '\' is read as '/'; an absolute line
//     is taken as is, a relative one is resolved against the folder holding the
//     .m3u (FileData.cpp lines 907-930). So a playlist at the system folder's
//     top level can name "Game/Game (Disc 1).chd".
//   - After the scan, every file named by such a game is dropped from the list
//     (SystemData.cpp lines 265-273) and folders left empty are dropped too
//     (lines 275-287). That is removeMultiDiskContent (lines 173-288), run at
//     lines 125-126 when the RemoveMultiDiskContent setting is on, which is its
//     default (Settings.cpp line 200; the menu calls it "IGNORE MULTI-FILE DISK
//     CONTENT (CUE/GDI/CCD/M3U)", es-app/src/guis/GuiMenu.cpp line 946). The
//     convention is therefore: discs in a sub-folder, a same-named .m3u beside
//     it, and ES shows one game.
//   - A folder whose name ends in an extension the system accepts is itself
//     listed as a game, not opened as a folder (SystemData.cpp lines 340-353);
//     a folder "X.m3u" in a system that accepts .m3u is one game whose content
//     is every file below it (FileData.cpp lines 868-872). Nothing in ES treats
//     a folder holding a same-named file as one game; that is per-emulator
//     configgen logic in batocera.linux (for example the dos system looks for
//     "<name>.bat" inside a "<name>.pc" folder in libretroGenerator.py).
//
// Hence Commit refuses a playlist line that does not name a file of the same
// commit, or that starts with '#' (read as a comment): a playlist is only
// useful, and only hides the discs, when every line resolves. CleanName's
// trimming matters here too: ES trims each line, so a name ending in a space
// could never be found. Callers choose Commit.Folder without a system extension unless they
// mean the folder to be the game.
package stage
