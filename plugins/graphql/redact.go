package main

import "github.com/parselbox/parselbox/sdk"

// newRedactor collects the credentials of c, which never reach the
// sandbox: the token; the values of headers whose names say they carry a
// credential (sdk.SecretName), with their part after a scheme such as
// "Basic " and what a Basic credential decodes to; and the endpoint URL's
// password, the Basic credential that Go sends for its userinfo, and its
// query values whose names say they are credentials. The bridge never
// puts them in a result, error or log line itself; the redactor catches a
// server that echoes them (an error page quoting the Authorization header,
// a field that returns request headers).
func newRedactor(c *config) *sdk.Redactor {
	return sdk.NewRedactor(secretsOf(c)...)
}

// secretsOf lists the credentials of c (see newRedactor).
func secretsOf(c *config) []string {
	secrets := []string{c.Token.Value()}
	for name, value := range c.Headers {
		secrets = append(secrets, sdk.HeaderSecrets(name, value)...)
	}
	return append(secrets, sdk.URLSecrets(c.Endpoint)...)
}
