package main

import (
	"time"

	"github.com/parselbox/parselbox/host/config"
)

// serverSettings are the options of the MCP server itself: the `server`
// block of the configuration file, and the flags that mirror it.
type serverSettings struct {
	Transport       string
	Host            string
	Port            int
	AuthToken       string
	IdleTimeout     time.Duration // 0: never
	MaxSessions     int           // 0: no limit
	PoolSize        int           // 0: no pool
	MaxOutputTokens int           // 0: no limit
	Elicit          bool
	NoUI            bool
}

// merge sets the settings that the file's server block sets; package
// config has checked their values.
func (s *serverSettings) merge(file config.Server) {
	set(&s.Transport, file.Transport)
	set(&s.Host, file.Host)
	set(&s.Port, file.Port)
	set(&s.AuthToken, file.AuthToken)
	set(&s.IdleTimeout, file.IdleTimeout)
	set(&s.MaxSessions, file.MaxSessions)
	set(&s.PoolSize, file.PoolSize)
	set(&s.MaxOutputTokens, file.MaxOutputTokens)
	set(&s.Elicit, file.Elicit)
	set(&s.NoUI, file.NoUI)
}

// set stores *v in dst when the file set it.
func set[T any](dst, v *T) {
	if v != nil {
		*dst = *v
	}
}
