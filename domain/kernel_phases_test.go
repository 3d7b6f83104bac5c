package domain

import "testing"

func TestKernelReportsWithinAPhase(t *testing.T) {
	sched := []Event{batch(), scheduled(place(kernelA, "a1", "GPU-0"))}
	pulling := append(append([]Event(nil), sched...), KernelPulling{KernelID: kernelA, At: at(2)},
		SessionStatusChanged{Status: StatusPulling, Reason: ReasonKernelPulling, At: at(2)})
	half := PullProgress{LayersDone: 1, LayersTotal: 2, BytesDone: 50, BytesTotal: 100}
	pullReport := func(p PullProgress, n int) KernelReport {
		r := report(PhasePulling, n)
		r.Pull = &p
		return r
	}
	pulled := append(append([]Event(nil), pulling...), KernelPullProgressed{KernelID: kernelA, Progress: half, At: at(3)})

	ports := []PublishedPort{
		{Name: "jupyter", Protocol: ServiceProtocolHTTP, ContainerPort: 8888, HostPort: 30000},
		{Name: "port-8080", Protocol: ServiceProtocolPreopen, ContainerPort: 8080, HostPort: 30001},
	}
	runEv := running(kernelA, 4)
	runEv.ServicePorts = ports
	run := append(append([]Event(nil), sched...), runEv, SessionStatusChanged{Status: StatusRunning, Reason: ReasonKernelStarted, At: at(4)})
	readyReport := func(container string, n int, apps ...string) KernelReport {
		r := report(PhaseRunning, n)
		r.ContainerID, r.ServicePorts, r.ReadyApps = container, ports, apps
		return r
	}
	oneReady := append(append([]Event(nil), run...), KernelAppsReady{KernelID: kernelA, Apps: []AppReady{{Name: "port-8080", At: at(5)}}, At: at(5)})

	runSessionCases(t, []sessionCase{
		{
			name:  "pull progress while pulling is recorded",
			given: pulling,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(pullReport(half, 3)) },
			then:  []Event{KernelPullProgressed{KernelID: kernelA, Progress: half, At: at(3)}},
			check: func(t *testing.T, s *Session) {
				k, _ := s.Kernel(kernelA)
				if p, ok := k.PullProgress(); !ok || p != half || s.Status() != StatusPulling {
					t.Fatalf("%v %v %s", p, ok, s.Status())
				}
			},
		},
		{
			name:  "the same progress again is no news",
			given: pulled,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(pullReport(half, 4)) },
		},
		{
			name:  "progress after the kernel moved on is no news",
			given: run,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(pullReport(half, 5)) },
		},
		{
			name:  "progress past its total is refused",
			given: pulling,
			when: func(s *Session) ([]Event, error) {
				return s.ReportKernel(pullReport(PullProgress{LayersDone: 1, LayersTotal: 1, BytesDone: 2, BytesTotal: 1}, 3))
			},
			err: &Error{Kind: KindInvalid},
		},
		{
			name:  "an app answering is recorded",
			given: run,
			when: func(s *Session) ([]Event, error) {
				return s.ReportKernel(readyReport(runEv.ContainerID, 5, "port-8080"))
			},
			then: []Event{KernelAppsReady{KernelID: kernelA, Apps: []AppReady{{Name: "port-8080", At: at(5)}}, At: at(5)}},
		},
		{
			name:  "readiness is cumulative and keeps when each app answered",
			given: oneReady,
			when: func(s *Session) ([]Event, error) {
				return s.ReportKernel(readyReport(runEv.ContainerID, 6, "port-8080", "jupyter"))
			},
			then: []Event{KernelAppsReady{KernelID: kernelA, Apps: []AppReady{{Name: "jupyter", At: at(6)}, {Name: "port-8080", At: at(5)}}, At: at(6)}},
			check: func(t *testing.T, s *Session) {
				k, _ := s.Kernel(kernelA)
				if got := k.AppsReady(); len(got) != 2 || got[0].Name != "jupyter" {
					t.Fatalf("%v", got)
				}
			},
		},
		{
			name:  "a ready app reported again is no news",
			given: oneReady,
			when: func(s *Session) ([]Event, error) {
				return s.ReportKernel(readyReport(runEv.ContainerID, 6, "port-8080"))
			},
		},
		{
			name:  "readiness from another container is a conflict",
			given: run,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(readyReport("other", 5, "port-8080")) },
			err:   &Error{Kind: KindConflict},
		},
		{
			name:  "an app the kernel did not publish is ignored",
			given: run,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(readyReport(runEv.ContainerID, 5, "ghost")) },
		},
		{
			name:  "a first running report with ready apps starts the kernel, then marks them",
			given: sched,
			when:  func(s *Session) ([]Event, error) { return s.ReportKernel(readyReport(runEv.ContainerID, 4, "jupyter")) },
			then: []Event{runEv, SessionStatusChanged{Status: StatusRunning, Reason: ReasonKernelStarted, At: at(4)},
				KernelAppsReady{KernelID: kernelA, Apps: []AppReady{{Name: "jupyter", At: at(4)}}, At: at(4)}},
		},
	})
}

func TestPullProgressPercent(t *testing.T) {
	for _, c := range []struct {
		p    PullProgress
		want int
	}{
		{PullProgress{}, 0},
		{PullProgress{BytesDone: 1, BytesTotal: 3}, 33},
		{PullProgress{BytesDone: 3, BytesTotal: 3}, 100},
	} {
		if got := c.p.Percent(); got != c.want {
			t.Errorf("%+v: %d, want %d", c.p, got, c.want)
		}
	}
	if err := CheckPullProgress("op", "pull", &PullProgress{LayersDone: -1}); KindOf(err) != KindInvalid {
		t.Fatalf("negative counts: %v", err)
	}
}
