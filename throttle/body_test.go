package throttle_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

// recordingReader serves size bytes and remembers when each was handed out
// and the largest read asked of it.
type recordingReader struct {
	left    int
	biggest int
	reads   []timedRead
}

type timedRead struct {
	at time.Time
	n  int
}

func (r *recordingReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	r.biggest = max(r.biggest, len(p))
	n := min(len(p), r.left)
	r.left -= n
	r.reads = append(r.reads, timedRead{time.Now(), n})
	return n, nil
}

func TestBodyBandwidth(t *testing.T) {
	for _, bps := range []int64{100_000, 3_000, 1 << 20} {
		synctest.Test(t, func(t *testing.T) {
			th := throttle.New(fixed(throttle.Settings{BytesPerSec: bps}))
			p := acquire(t, th, host)
			src := &recordingReader{left: int(10 * bps)}
			start := time.Now()
			n, err := io.Copy(io.Discard, p.Body(context.Background(), src))
			elapsed := time.Since(start)
			p.Done(throttle.Outcome{Status: 200, Bytes: n})
			if err != nil || n != 10*bps {
				t.Fatalf("copied %d bytes, err %v; want %d", n, err, 10*bps)
			}
			got := float64(n) / elapsed.Seconds()
			if math.Abs(got-float64(bps)) > 0.05*float64(bps) {
				t.Errorf("%d B/s budget: read %d bytes in %v = %.0f B/s, beyond ±5%%", bps, n, elapsed, got)
			}
			if src.biggest > 8<<10 {
				t.Errorf("read chunks of %d bytes, want at most 8 KiB", src.biggest)
			}
			// No second of the transfer takes more than a second's budget
			// plus one chunk.
			for i, r := range src.reads {
				sum := 0
				for _, s := range src.reads[i:] {
					if s.at.Sub(r.at) < time.Second {
						sum += s.n
					}
				}
				if limit := bps + min(bps, 8<<10); int64(sum) > limit {
					t.Fatalf("%d bytes within one second from %v, limit %d", sum, r.at.Sub(start), limit)
				}
			}
			if st := th.Stats()[0]; st.Bytes != n || st.ReadWait < elapsed-time.Second {
				t.Errorf("stats: %d bytes, read wait %v; want %d and about %v", st.Bytes, st.ReadWait, n, elapsed)
			}
		})
	}
}

func TestBodyGlobalBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const global, each = 100_000, 500_000
		cfg := fixed(throttle.Settings{BytesPerSec: 80_000})
		cfg.GlobalBytesPerSec = global
		th := throttle.New(cfg)
		start := time.Now()
		var wg sync.WaitGroup
		for _, h := range []string{"a.test:80", "b.test:80"} {
			p := acquire(t, th, h)
			wg.Go(func() {
				n, err := io.Copy(io.Discard, p.Body(context.Background(), &recordingReader{left: each}))
				if err != nil || n != each {
					t.Errorf("%s: copied %d, err %v", h, n, err)
				}
				p.Done(throttle.Outcome{Status: 200, Bytes: n})
			})
		}
		wg.Wait()
		// Each host alone could do 80 kB/s, together 160 kB/s; the global
		// budget holds them to 100 kB/s.
		got := 2 * each / time.Since(start).Seconds()
		if math.Abs(got-global) > 0.05*global {
			t.Errorf("two hosts together read %.0f B/s, want %d ±5%%", got, global)
		}
	})
}

func TestBodyByteQuota(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{QuotaBytes: 20_000}))
		p := acquire(t, th, host)
		n, err := io.Copy(io.Discard, p.Body(context.Background(), &recordingReader{left: 50_000}))
		p.Done(throttle.Outcome{Status: 200, Bytes: n})
		if !errors.Is(err, throttle.ErrQuota) || n != 20_000 {
			t.Fatalf("read %d bytes, err %v; want exactly the 20000-byte quota, then ErrQuota", n, err)
		}
		if _, _, err := th.Reserve(host); !errors.Is(err, throttle.ErrQuota) {
			t.Errorf("Reserve after the byte quota: err %v, want ErrQuota", err)
		}
		if st := th.Stats()[0]; st.UsedBytes != 20_000 || st.Bytes != 20_000 {
			t.Errorf("counted %d / %d bytes, want 20000 (no double counting with Outcome.Bytes)", st.UsedBytes, st.Bytes)
		}
	})
}

func TestBodyQuotaSharedByConcurrentBodies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{QuotaBytes: 30_000, BytesPerSec: 10_000}))
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			total int64
		)
		for range 3 {
			p := acquire(t, th, host)
			wg.Go(func() {
				n, _ := io.Copy(io.Discard, p.Body(context.Background(), &recordingReader{left: 25_000}))
				p.Done(throttle.Outcome{Status: 200})
				mu.Lock()
				total += n
				mu.Unlock()
			})
		}
		wg.Wait()
		if total != 30_000 {
			t.Errorf("three bodies read %d bytes together, want the 30000-byte quota", total)
		}
	})
}

func TestBodyContextCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{BytesPerSec: 1_000}))
		p := acquire(t, th, host)
		defer p.Done(throttle.Outcome{Status: 200})
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		start := time.Now()
		n, err := io.Copy(io.Discard, p.Body(ctx, &recordingReader{left: 1 << 20}))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v, want the context's deadline", err)
		}
		if d := time.Since(start); d != 3*time.Second || n > 4_000 {
			t.Errorf("stopped after %v with %d bytes; want at the 3s deadline, about 3000 bytes", d, n)
		}
	})
}

func TestBodyUnwrappedWithoutLimits(t *testing.T) {
	th := throttle.New(throttle.Config{})
	p, _, _ := th.Reserve(host)
	r := strings.NewReader("body")
	if got := p.Body(context.Background(), r); got != io.Reader(r) {
		t.Error("a host without byte limits should read the body directly")
	}
	p.Done(throttle.Outcome{Status: 200, Bytes: 4})
	if st := th.Stats()[0]; st.Bytes != 4 {
		t.Errorf("bytes %d, want 4 from Outcome.Bytes", st.Bytes)
	}
}

func TestBodyPassesReadErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{BytesPerSec: 1 << 20}))
		p := acquire(t, th, host)
		defer p.Done(throttle.Outcome{Status: 200})
		boom := errors.New("connection reset")
		got, err := io.ReadAll(p.Body(context.Background(), io.MultiReader(bytes.NewReader([]byte("abc")), iotestErr{boom})))
		if string(got) != "abc" || !errors.Is(err, boom) {
			t.Errorf("got %q, %v; want abc then the reader's error", got, err)
		}
	})
}

type iotestErr struct{ err error }

func (e iotestErr) Read([]byte) (int, error) { return 0, e.err }
