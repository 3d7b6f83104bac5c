package devserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// part is one running component: a goroutine running until its context
// ends, or something to close.
type part struct {
	name   string
	cancel context.CancelFunc
	// done receives what the goroutine returned; nil for a part that is
	// only closed.
	done  chan error
	close func() error
	// onItsOwn is set before done receives when the goroutine returned
	// without being asked to: its error was reported through exited.
	onItsOwn bool
}

// parts are the components started so far, in start order. Parts never
// share the caller's context: they are stopped one by one, in reverse, by
// stopAll.
type parts struct {
	log     *slog.Logger
	timeout time.Duration
	list    []*part
	// exited receives the name and error of a goroutine that returned on
	// its own, before stopAll asked it to.
	exited chan exit
}

type exit struct {
	name string
	err  error
}

func newParts(log *slog.Logger, timeout time.Duration) *parts {
	return &parts{log: log, timeout: timeout, exited: make(chan exit, 32)}
}

// goRun starts run in a goroutine with a context of its own.
func (p *parts) goRun(name string, run func(ctx context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	pt := &part{name: name, cancel: cancel, done: make(chan error, 1)}
	p.list = append(p.list, pt)
	go func() {
		err := run(ctx)
		if ctx.Err() == nil {
			// Not asked to stop: the server must stop.
			if err == nil {
				err = errors.New("stopped on its own")
			}
			pt.onItsOwn = true
			select {
			case p.exited <- exit{name, err}:
			default:
			}
		}
		pt.done <- err
	}()
}

// onClose registers something to close when the parts stop.
func (p *parts) onClose(name string, close func() error) {
	p.list = append(p.list, &part{name: name, close: close})
}

// stopAll stops every part, the last started first, each within the
// timeout, and returns what went wrong.
func (p *parts) stopAll() error {
	var errs []error
	for i := len(p.list) - 1; i >= 0; i-- {
		pt := p.list[i]
		start := time.Now()
		if err := p.stop(pt); err != nil {
			p.log.Error("stop", "part", pt.name, "error", err)
			errs = append(errs, fmt.Errorf("%s: %w", pt.name, err))
			continue
		}
		p.log.Debug("stopped", "part", pt.name, "took", time.Since(start))
	}
	p.list = nil
	return errors.Join(errs...)
}

func (p *parts) stop(pt *part) error {
	if pt.close != nil {
		return pt.close()
	}
	pt.cancel()
	select {
	case err := <-pt.done:
		if pt.onItsOwn {
			return nil // reported when it happened
		}
		return err
	case <-time.After(p.timeout):
		return fmt.Errorf("did not stop within %s", p.timeout)
	}
}
