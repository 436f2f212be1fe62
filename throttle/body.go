package throttle

import (
	"context"
	"fmt"
	"io"
	"time"

	"golang.org/x/time/rate"
)

// Body wraps a response body so that reading it keeps the host's
// BytesPerSec and the global budget, and counts toward the host's byte
// quota. It reads in chunks of at most 8 KiB (and at most 1/20 s of the
// smaller budget) and, after each chunk, waits until the budgets have room
// for it.
// Waiting ends early with ctx's error. Once the byte quota is used up, Read
// returns an error wrapping ErrQuota without reading more (a body that ends
// exactly at the quota therefore reports ErrQuota rather than io.EOF).
// When the host has no byte limits at all, r is returned unwrapped and the
// bytes are counted from Outcome.Bytes instead.
func (p *Permit) Body(ctx context.Context, r io.Reader) io.Reader {
	l, global := p.l, p.t.global
	if l.bytes == nil && global == nil && l.set.QuotaBytes == 0 {
		return r
	}
	chunk := maxChunk
	for _, lim := range []*rate.Limiter{l.bytes, global} {
		if lim != nil {
			chunk = min(chunk, lim.Burst())
		}
	}
	return &pacedBody{ctx: ctx, r: r, p: p, chunk: chunk}
}

type pacedBody struct {
	ctx   context.Context
	r     io.Reader
	p     *Permit
	chunk int
}

func (b *pacedBody) Read(buf []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	if len(buf) == 0 {
		return b.r.Read(buf)
	}
	want, err := b.p.takeQuota(min(len(buf), b.chunk))
	if err != nil {
		return 0, err
	}
	n, rerr := b.r.Read(buf[:want])
	b.p.settleQuota(want, n)
	if n > 0 {
		if err := b.pace(n); err != nil {
			return n, err
		}
	}
	return n, rerr
}

// pace waits until the host's and the global byte budgets have room for n
// bytes just read.
func (b *pacedBody) pace(n int) error {
	t, l := b.p.t, b.p.l
	now := t.now()
	var delay time.Duration
	for _, lim := range []*rate.Limiter{l.bytes, t.global} {
		if lim != nil {
			delay = max(delay, lim.ReserveN(now, n).DelayFrom(now))
		}
	}
	if delay <= 0 {
		return nil
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-b.ctx.Done():
		// Bytes not yet paid for were read already; giving the budget back
		// would only let the next read go faster than the budget.
		return b.ctx.Err()
	}
	l.mu.Lock()
	l.readWait += delay
	l.mu.Unlock()
	return nil
}

// takeQuota books up to n bytes of the host's byte quota for a read, so
// that concurrent bodies together never read past it.
func (p *Permit) takeQuota(n int) (int, error) {
	l := p.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if q := l.set.QuotaBytes; q > 0 {
		left := q - l.usedBytes
		if left <= 0 {
			return 0, fmt.Errorf("read body from %s: %w", l.key, ErrQuota)
		}
		n = int(min(int64(n), left))
		l.usedBytes += int64(n)
	}
	return n, nil
}

// settleQuota turns a booking of booked bytes into the n actually read.
func (p *Permit) settleQuota(booked, n int) {
	l := p.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.set.QuotaBytes > 0 {
		l.usedBytes -= int64(booked - n)
	} else {
		l.usedBytes += int64(n)
	}
	l.bytesTotal += int64(n)
	p.read += int64(n)
}
