package readapi

import (
	"context"
	"errors"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections/sessions"
)

// idleView is how long a running interactive session has been unused and
// when it ends if nobody uses it (GET /v1/sessions/{id}).
type idleView struct {
	TimeoutSeconds int64     `json:"timeout_seconds"`
	Since          time.Time `json:"since"`
	EndsAt         time.Time `json:"ends_at"`
}

// lifetimeView is when a session ends for its maximum lifetime.
type lifetimeView struct {
	EndsAt time.Time `json:"ends_at"`
}

// sessionLimits sets the idle and lifetime limits of v, by the rules the
// session-limits manager applies (domain.IdleTimeout, IdleSince,
// LifetimeEnds), from the owner's keypair policy and the run-time
// settings as the read models have them. Idleness counts from the
// session's start or its last use; the manager may count from later still
// (its own start, a return from DISCONNECTED), so the end shown is never
// later than the real one. A session whose keypair or policy is unknown
// has no limit, as for the manager.
func (a *api) sessionLimits(ctx context.Context, s sessions.Session, v *sessionView) error {
	ended := s.Status.IsTerminal() || s.Status == domain.StatusTerminating
	if ended || s.ScheduledAt == nil {
		return nil
	}
	kp, err := a.Tenancy.GetKeypair(ctx, s.Owner.AccessKey)
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	p, err := a.Tenancy.GetKeypairPolicy(ctx, kp.ResourcePolicy)
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if ends, ok := domain.LifetimeEnds(*s.ScheduledAt, p.MaxSessionLifetime); ok {
		v.Lifetime = &lifetimeView{EndsAt: ends}
	}
	if s.Status != domain.StatusRunning || s.StartedAt == nil || s.Type != domain.SessionInteractive {
		return nil
	}
	var defaultIdle int64
	if p.IdleTimeout == 0 {
		if defaultIdle, err = a.defaultIdleTimeout(ctx); err != nil {
			return err
		}
	}
	idle := domain.IdleTimeout(s.Type, p.IdleTimeout, defaultIdle)
	if idle <= 0 {
		return nil
	}
	var lastUse time.Time
	if s.LastUsedAt != nil {
		lastUse = *s.LastUsedAt
	}
	since := domain.IdleSince(*s.StartedAt, lastUse).UTC()
	v.Idle = &idleView{TimeoutSeconds: int64(idle / time.Second), Since: since, EndsAt: domain.IdleEnds(since, idle)}
	return nil
}

// defaultIdleTimeout is session.default_idle_timeout in seconds: as set,
// or its default when the settings are not served.
func (a *api) defaultIdleTimeout(ctx context.Context) (int64, error) {
	if a.Settings.Changes != nil {
		return a.Settings.Int(ctx, domain.SettingSessionIdleTimeout)
	}
	def, _ := domain.LookupSetting(domain.SettingSessionIdleTimeout)
	return def.Int(def.Default), nil
}
