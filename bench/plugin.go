package main

import (
	"errors"

	"github.com/parselbox/parselbox/host"
)

// sampler times n sync calls of a tool from Python.
type sampler func(fn string, n int) ([]float64, error)

// pluginConfig adds the plugin bridge measured, if one is built.
func (b *bench) pluginConfig(cfg *host.Config) error {
	return errors.New("no plugin manager yet")
}

// measurePlugin measures calls through the plugin, if configured.
func (b *bench) measurePlugin(eval func(string) (any, error), samples sampler) error {
	return nil
}
