// Package wheel writes a Python wheel (the binary distribution format of
// PyPA's specifications) that carries no Python code, only programs: each
// one lands in the wheel's NAME-VERSION.data/scripts/, which pip, pipx and
// uv install onto PATH (bin/ of the environment) with its mode. The
// .dist-info holds METADATA (with a long description, such as a README),
// WHEEL (the tags), the licence files and RECORD, whose lines carry each
// file's sha256 digest (urlsafe base64 without padding) and size.
//
// Output is deterministic: files in a fixed order, .dist-info last and
// RECORD the very last, every time stamp the one given. scripts/package.sh
// runs it through cmd/internal/mkwheel.
package wheel
