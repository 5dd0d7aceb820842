package main

import (
	"regexp"
	"testing"
)

func TestRefOn(t *testing.T) {
	text := "- link \"Other\" [ref=e1]\n- cell \"INV-20417\" [ref=f4e17] — row: INV-20417 | €8,523.27\n"
	if got := refOn(text, regexp.MustCompile(`(row|cell) "INV-20417`)); got != "f4e17" {
		t.Errorf("refOn = %q, want f4e17", got)
	}
	if got := refOn(text, regexp.MustCompile(`button "Buy"`)); got != "" {
		t.Errorf("refOn found %q for a control that is not there", got)
	}
}

func TestAgentRows(t *testing.T) {
	rows := agentRowSpecs()
	if len(rows) != len(agentTasks())+2 {
		t.Fatalf("%d rows for %d tasks", len(rows), len(agentTasks()))
	}
	goals := map[string]float64{}
	for _, r := range rows {
		goals[r.Key] = r.Goal
	}
	if goals[rowTargeted] != 0.70 || goals[rowExploratory] != 0.30 {
		t.Errorf("goals: %v", goals)
	}
	targeted := 0
	for _, task := range agentTasks() {
		if !task.Exploratory {
			targeted++
		}
		if task.Tool == "" && task.Want == "" {
			t.Errorf("task %q neither acts nor reads a value", task.Name)
		}
	}
	if targeted != 5 || rowTargeted != "agent tasks, targeted (5)" {
		t.Errorf("targeted tasks %d, row %q", targeted, rowTargeted)
	}
}
