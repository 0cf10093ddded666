package acltest

import "testing"

func (s *suite) context(t *testing.T)      { t.Skip("pending") }
func (s *suite) stream(t *testing.T)       { t.Skip("pending") }
func (s *suite) event(t *testing.T)        { t.Skip("pending") }
func (s *suite) memory(t *testing.T)       { t.Skip("pending") }
func (s *suite) copy(t *testing.T)         { t.Skip("pending") }
func (s *suite) hostRegister(t *testing.T) { t.Skip("pending") }
func (s *suite) idiomatic(t *testing.T)    { t.Skip("pending") }
