package storebench

import (
	"slices"
	"testing"
)

func TestConfigScenarios(t *testing.T) {
	tests := []struct {
		name      string
		scenarios []string
		wantErr   bool
		wantRuns  []string
	}{
		{"default runs all", nil, false, Scenarios()},
		{"one", []string{ScenarioAppendWriters}, false, []string{ScenarioAppendWriters}},
		{"two", []string{ScenarioReplay, ScenarioLag}, false, []string{ScenarioReplay, ScenarioLag}},
		{"unknown", []string{ScenarioLag, "append-16"}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Config{Scenarios: tt.scenarios}
			if err := c.Validate(); (err != nil) != tt.wantErr {
				t.Fatalf("Validate() = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			var runs []string
			for _, s := range Scenarios() {
				if c.runs(s) {
					runs = append(runs, s)
				}
			}
			if !slices.Equal(runs, tt.wantRuns) {
				t.Errorf("runs %v, want %v", runs, tt.wantRuns)
			}
		})
	}
}
