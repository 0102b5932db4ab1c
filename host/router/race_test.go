//go:build race

package router

// raceEnabled: the race detector adds allocations of its own.
const raceEnabled = true
