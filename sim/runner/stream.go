package runner

import (
	"context"
	"sync"

	"github.com/dedupsim/dedupsim/generators"
)

// One generated stream per run: every job of a run reads the same rows
// (the scenario's generator, whatever the query, the delay, the faults,
// the trigger or the sink: those decide how a job cuts the rows into
// batches and what it does with them, never which rows arrive). A shared
// stream generates them once, on a producer goroutine, into a ring of
// chunks that every job reads through its own cursor; a chunk is reused
// once every job has read past it. Each job still cuts its own batches
// from the rows (its triggers, spark.maxRowsPerBatch and modelled batch
// durations may differ), so its results are exactly those of a job with
// its own generator.
//
// The fastest job runs at most streamRing chunks ahead of the slowest, so
// the memory is bounded by the ring, never by the run's length, and every
// job of the run must be running: the runner starts all of them at once
// and bounds the CPU they use with its workers' tokens (cpuTokens), which
// a job gives back while it waits for rows.
//
// Jobs of a resumable run keep their own generator: a job snapshot saves
// its source's position, which a cursor into a shared ring cannot give.

const (
	// streamChunk is the rows of one chunk.
	streamChunk = 4096
	// streamRing is the chunks of the ring.
	streamRing = 16
)

// cpuTokens bounds how many of a run's goroutines compute at once: a
// goroutine takes a token to work and gives it back to wait.
type cpuTokens chan struct{}

func newCPUTokens(n int) cpuTokens { return make(cpuTokens, max(n, 1)) }

// acquire takes a token, or returns ctx's error.
func (t cpuTokens) acquire(ctx context.Context) error {
	select {
	case t <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release gives a token back.
func (t cpuTokens) release() { <-t }

// jobToken is one goroutine's hold on a CPU token.
type jobToken struct {
	t    cpuTokens
	held bool
}

// take takes a token, unless the goroutine holds one.
func (j *jobToken) take(ctx context.Context) error {
	if j == nil || j.held {
		return nil
	}
	if err := j.t.acquire(ctx); err != nil {
		return err
	}
	j.held = true
	return nil
}

// give gives the token back, if the goroutine holds one.
func (j *jobToken) give() {
	if j != nil && j.held {
		j.held = false
		j.t.release()
	}
}

// sharedStream is a run's stream, generated once for its readers.
type sharedStream struct {
	src    Source
	tokens cpuTokens

	mu   sync.Mutex
	cond *sync.Cond
	ring [streamRing][]generators.Row
	// produced is the chunks generated so far; the last one is short (or
	// empty) when end is set.
	produced int64
	end      bool
	// pos is each reader's chunk: the chunk it reads, or -1 once it
	// detached. A chunk's slot is free once every reader is past it.
	pos []int64
	// stop ends the producer (every reader detached, or the run ended).
	stop bool
}

// newSharedStream returns a stream of src for readers readers; run its
// producer with run.
func newSharedStream(src Source, readers int, tokens cpuTokens) *sharedStream {
	s := &sharedStream{src: src, tokens: tokens, pos: make([]int64, readers)}
	s.cond = sync.NewCond(&s.mu)
	for i := range s.ring {
		s.ring[i] = make([]generators.Row, 0, streamChunk)
	}
	return s
}

// run generates the stream's chunks until the stream ends, every reader
// detached, or ctx is done. It holds a CPU token while it generates.
func (s *sharedStream) run(ctx context.Context) {
	defer func() {
		s.mu.Lock()
		s.end = true
		s.cond.Broadcast()
		s.mu.Unlock()
	}()
	for {
		s.mu.Lock()
		// Wait for the slot of chunk produced: free once every reader
		// is past the chunk it held.
		for !s.stop && s.produced-s.slowest() >= streamRing {
			s.cond.Wait()
		}
		if s.stop {
			s.mu.Unlock()
			return
		}
		seq := s.produced
		s.mu.Unlock()
		if ctx.Err() != nil || s.tokens.acquire(ctx) != nil {
			return
		}
		buf := s.ring[seq%streamRing][:streamChunk]
		n := 0
		for n < streamChunk && s.src.Next(&buf[n]) {
			n++
		}
		s.tokens.release()
		s.mu.Lock()
		s.ring[seq%streamRing] = buf[:n]
		s.produced++
		if n < streamChunk {
			s.end = true
		}
		s.cond.Broadcast()
		done := s.end
		s.mu.Unlock()
		if done {
			return
		}
	}
}

// slowest returns the chunk of the slowest reader still attached, or
// produced when none is.
func (s *sharedStream) slowest() int64 {
	m := s.produced
	for _, p := range s.pos {
		if p >= 0 {
			m = min(m, p)
		}
	}
	return m
}

// close stops the producer whatever the readers do.
func (s *sharedStream) close() {
	s.mu.Lock()
	s.stop = true
	s.cond.Broadcast()
	s.mu.Unlock()
}

// reader returns reader i's cursor over the stream.
func (s *sharedStream) reader(ctx context.Context, i int, tok *jobToken) *streamReader {
	return &streamReader{s: s, ctx: ctx, i: i, tok: tok}
}

// streamReader is one job's cursor: a Source over the shared rows. The
// job holds a CPU token while it runs; the reader gives it back while it
// waits for the producer.
type streamReader struct {
	s     *sharedStream
	ctx   context.Context
	i     int
	tok   *jobToken
	chunk []generators.Row
	next  int
	// attached is set once the reader took its first chunk.
	attached bool
}

// Next copies the next row into r and reports false at the end of the
// stream (or when the run was cancelled: the job's loop then sees ctx's
// error).
func (c *streamReader) Next(r *generators.Row) bool {
	if c.next < len(c.chunk) {
		*r = c.chunk[c.next]
		c.next++
		return true
	}
	if !c.advance() {
		return false
	}
	*r = c.chunk[c.next]
	c.next++
	return true
}

// advance moves to the next chunk with rows, waiting for the producer.
func (c *streamReader) advance() bool {
	s := c.s
	for {
		s.mu.Lock()
		if c.attached {
			s.pos[c.i]++
			s.cond.Broadcast()
		}
		c.attached = true
		seq := s.pos[c.i]
		if seq < 0 {
			s.mu.Unlock()
			return false
		}
		if seq >= s.produced && !s.end {
			// Wait without the token: the producer or the slower jobs
			// need it.
			s.mu.Unlock()
			c.tok.give()
			s.mu.Lock()
			for seq >= s.produced && !s.end {
				s.cond.Wait()
			}
			s.mu.Unlock()
			if c.tok.take(c.ctx) != nil {
				// Cancelled: the job's loop returns ctx's error.
				c.chunk, c.next = nil, 0
				c.detach()
				return false
			}
			s.mu.Lock()
		}
		if seq >= s.produced {
			// The stream ended before this chunk.
			s.mu.Unlock()
			c.chunk, c.next = nil, 0
			return false
		}
		c.chunk, c.next = s.ring[seq%streamRing], 0
		s.mu.Unlock()
		if len(c.chunk) > 0 {
			return true
		}
		// An empty last chunk: the next pass sees the end.
	}
}

// detach tells the producer the reader reads no more.
func (c *streamReader) detach() {
	s := c.s
	s.mu.Lock()
	s.pos[c.i] = -1
	all := true
	for _, p := range s.pos {
		all = all && p < 0
	}
	if all {
		s.stop = true
	}
	s.cond.Broadcast()
	s.mu.Unlock()
}
