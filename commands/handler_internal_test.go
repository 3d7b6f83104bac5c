package commands

import (
	"context"
	"testing"
)

type echo struct{}

func (echo) Handle(context.Context, Metadata, TerminateSession) (Result, error) { return Result{}, nil }

func TestRegistryRefusesDuplicates(t *testing.T) {
	r := newRegistry()
	register[TerminateSession, Result](r, echo{})
	if len(r.errs) != 0 {
		t.Fatal(r.errs)
	}
	register[TerminateSession, Result](r, echo{})
	if len(r.errs) != 1 {
		t.Fatalf("a second handler for %q was accepted", TerminateSession{}.CommandName())
	}
}
