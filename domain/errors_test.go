package domain

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorKinds(t *testing.T) {
	err := fmt.Errorf("handler: %w", Invalid("session.request", "resources.mem", "must not be negative"))
	if !errors.Is(err, ErrInvalid) {
		t.Fatal("errors.Is(ErrInvalid) = false")
	}
	if errors.Is(err, ErrNotFound) {
		t.Fatal("errors.Is(ErrNotFound) = true for an invalid error")
	}
	if KindOf(err) != KindInvalid {
		t.Fatalf("KindOf = %v", KindOf(err))
	}
	var de *Error
	if !errors.As(err, &de) || de.Field != "resources.mem" {
		t.Fatalf("errors.As: %+v", de)
	}
	if got, want := de.Error(), "session.request: resources.mem: must not be negative"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if KindOf(errors.New("plain")) != KindInternal {
		t.Fatal("a plain error must be internal")
	}
	if KindTooLarge.String() != "too-large" || Kind(200).String() != "kind(200)" {
		t.Fatal("Kind.String")
	}
}
