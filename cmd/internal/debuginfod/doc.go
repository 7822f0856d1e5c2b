// Package debuginfod is a debuginfod client that shares elfutils' cache:
// what it downloads, debuginfod-find and gdb find without asking a server,
// and what they downloaded, it finds.
//
// # Servers
//
// DEBUGINFOD_URLS lists server URLs. elfutils (0.188) splits it on spaces
// only; ParseURLs splits on any white space, which no URL can contain.
// Like elfutils it drops duplicates (a trailing slash does not make a URL
// different), reads a URL without a scheme as http://, and skips schemes
// it cannot fetch (it keeps http, https and file). A file is asked for with
//
//	GET <url>/buildid/<hex>/debuginfo
//	GET <url>/buildid/<hex>/executable
//	GET <url>/buildid/<hex>/source/<absolute path, each byte outside A-Za-z0-9-._~ percent-encoded>
//
// where <url> keeps one trailing slash at most. All servers are asked at
// once; the first that answers 200 is read and the others are dropped. When
// that download fails (wrong build-id, too large, cut short), the servers
// not yet heard from are asked again. A build-id is "not found"
// (ErrNotFound) only when every server answered 404.
//
// # Cache layout (elfutils 0.188, checked with debuginfod-find)
//
// The cache directory is $DEBUGINFOD_CACHE_PATH when set and not empty;
// else $HOME/.debuginfod_client_cache when that exists (deprecated, but
// elfutils still prefers it); else $XDG_CACHE_HOME/debuginfod_client when
// XDG_CACHE_HOME is not empty; else $HOME/.cache/debuginfod_client ("/"
// stands for an unset HOME). In it:
//
//	<hex>/                      mode 0700
//	<hex>/debuginfo             mode 0400, mtime = the server's Last-Modified
//	<hex>/executable
//	<hex>/source##usr##include##stdio.h   the path with "/" -> "##", "#" -> "#_"
//	cache_miss_s                decimal seconds; default 600
//
// A source path whose escaped name exceeds 255 bytes cannot be cached
// (elfutils 0.188 fails the same way, with EINVAL).
//
// A lookup that every server answered with 404 leaves an empty file in
// the place of the entry: a negative entry. elfutils 0.188 honours any
// empty regular file as one (its own are mode 0644; older releases wrote
// and looked for mode 0000), for as long as its mtime is no more than
// cache_miss_s seconds old; after that it asks the servers again. This
// package reads negative entries the same way and writes them with mode
// 0000, which every elfutils release recognises. Timeouts and other
// failures leave no negative entry, as in elfutils.
//
// Files are downloaded to a temporary file in the entry's directory
// (safefs.CreateTemp: named after the writer's pid), checked, flushed and
// renamed into place (Commit), so a reader never sees a partial file and
// a failed, cancelled, oversized or wrong download leaves nothing behind.
// A temporary file that a killed run could not remove is swept the next
// time its entry is looked up (safefs.Sweep: only when its writer no
// longer runs, or it is a day old). Cleaning the cache
// (cache_clean_interval_s, max_unused_age_s) is left to elfutils, whose
// next run cleans our entries as its own.
//
// # Trust
//
// An ELF entry (debuginfo, executable), downloaded or found in the cache,
// is used only when it is an ELF file carrying the requested build-id. A
// server sending another file is rejected (ErrWrongBuildID). A cached file
// that fails the check is reported and ignored, never deleted: the cache
// is shared with other tools and maybe other users, and a good download
// replaces it by rename. Sources cannot be checked; they are only bounded
// by the size limit.
//
// # Environment (as elfutils' client reads it; see FromEnv)
//
//   - DEBUGINFOD_TIMEOUT, seconds, default 90; zero or negative: none. A
//     server that does not deliver at least 100 KiB within each such
//     window, counting from the connection, is given up (this is what
//     elfutils asks of libcurl: CURLOPT_LOW_SPEED_LIMIT 100K/timeout over
//     CURLOPT_LOW_SPEED_TIME timeout). Other servers and other build-ids
//     go on.
//   - DEBUGINFOD_MAXSIZE, bytes; 0 (or less) for none, as in elfutils.
//     Unset, the limit is DefaultMaxSize (2 GiB; elfutils has none), so
//     that a server sending an endless answer cannot fill the disk. It is
//     sent to the server (X-DEBUGINFOD-MAXSIZE, which a debuginfod server
//     answers with 406), and a larger answer is refused (ErrTooLarge,
//     elfutils' EFBIG): by its Content-Length or X-DEBUGINFOD-SIZE
//     before a byte is read, else as soon as the bytes received pass it.
//     Whatever the limit, an answer that would leave less than FreeMargin
//     (64 MiB) free on the cache's file system is refused or cut the same
//     way (ErrNoSpace), and one that ends before its Content-Length is
//     an error (ErrCut); net/http reads no further than the
//     Content-Length. A refused or cut download leaves nothing in the
//     cache.
//   - DEBUGINFOD_PROGRESS: when set (even empty), progress goes to the
//     writer FromEnv's caller passes (pyattach's standard error), whether
//     or not it is a terminal.
//
// Not implemented: DEBUGINFOD_RETRY_LIMIT (elfutils retries a failed
// query twice by default; here a failure is final for the call),
// DEBUGINFOD_MAXTIME, DEBUGINFOD_HEADERS_FILE, IMA signatures. Proxies
// come from http_proxy and friends of the process environment, through
// net/http, when Client.HTTP is left nil.
//
// # Room
//
// A client that downloads and writes a shared cache is a tool of the
// commands, not a fact about a target, so it sits under cmd/internal
// with its progress bar. Finding an entry already in the cache (Cached)
// stays here with the downloads: the layout it reads is the one it
// writes, and a change to it touches one folder.
package debuginfod
