package safefs

import (
	"context"
	"io"
)

// CtxReader is r that stops a copy once ctx is done (an interrupt): its
// next Read returns ctx's error, so that a cancelled write is never
// renamed into place.
func CtxReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
