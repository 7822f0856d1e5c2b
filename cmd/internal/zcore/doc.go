// Package zcore opens compressed core files: it recognises zstd, lz4
// (frame format), xz and gzip by their magic bytes (never by the file's
// name), decompresses a core once into a private cache directory,
// streaming and bounded (a size cap and the directory's free space),
// keyed by the SHA-256 of the compressed file and written under a
// temporary name then renamed, and reads what a systemd-coredump file
// name says of the process (ParseName).
//
// Libraries: klauspost/compress's zstd (already pyattach's, pure Go and
// streaming), pierrec/lz4/v4 (the lz4 frame format systemd-coredump
// writes, streaming), ulikunitz/xz (pure Go xz/LZMA2) and the standard
// library's compress/gzip.
package zcore
