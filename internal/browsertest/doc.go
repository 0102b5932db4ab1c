// Package browsertest starts headless Chromium for tests that look at a
// page as a person would (computed styles, screenshots), driven by
// chromedp, and records every network request the page makes so that a
// test can assert that none leaves the machine.
//
// Chromium is Debian's chromium package (`make browser` installs it). A
// test skips with a message saying so when it is missing, and fails when
// PARSELBOX_REQUIRE_BROWSER is set (make test sets it).
//
//	b := browsertest.New(t)
//	err := chromedp.Run(b.Ctx, chromedp.Navigate(url), ...)
//	b.Screenshot("view")          // under t.ArtifactDir()
//	b.Offsite()                   // requests to anything but loopback
package browsertest
