package main

import "github.com/pyattach/pyattach/cmd/internal/dump"

// The dump tests of this package read dump's JSON and text with these.
type (
	dumpOutput  = dump.Output
	dumpThread  = dump.Thread
	dumpFrame   = dump.Frame
	nativeFrame = dump.NativeFrame
)

var (
	omittedLine = dump.OmittedLine
	tracerOf    = dump.TracerOf
)
