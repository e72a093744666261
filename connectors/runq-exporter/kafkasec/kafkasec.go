// Package kafkasec turns Tally's Kafka client security settings, the environment variables
// every Tally client reads (TALLY_KAFKA_SECURITY_PROTOCOL, TALLY_KAFKA_SASL_*,
// TALLY_KAFKA_SSL_*), into franz-go options: SASL (SCRAM-SHA-512, SCRAM-SHA-256 or PLAIN) and
// TLS checked against a PEM trust store. The password may come from a file, so it need be in no
// environment or command line, and String never shows it.
package kafkasec

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Settings is how the client authenticates to Kafka and checks the broker it reached.
type Settings struct {
	Protocol       string // PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
	Mechanism      string // SCRAM-SHA-512, SCRAM-SHA-256 or PLAIN (SASL_* only)
	Username       string
	password       string
	Truststore     string // a PEM file of the CAs the broker's certificate must chain to; "" = the system's
	VerifyHostname bool   // the certificate must name the host dialled
}

// FromEnv reads the settings with getenv (os.Getenv in production); an unset variable takes
// its default, a wrong value is an error naming the variable.
func FromEnv(getenv func(string) string) (Settings, error) {
	get := func(name, dflt string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return dflt
	}
	s := Settings{
		Protocol:   strings.ToUpper(get("TALLY_KAFKA_SECURITY_PROTOCOL", "PLAINTEXT")),
		Mechanism:  strings.ToUpper(get("TALLY_KAFKA_SASL_MECHANISM", "SCRAM-SHA-512")),
		Username:   get("TALLY_KAFKA_SASL_USERNAME", ""),
		password:   getenv("TALLY_KAFKA_SASL_PASSWORD"),
		Truststore: get("TALLY_KAFKA_SSL_TRUSTSTORE", ""),
	}
	switch s.Protocol {
	case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
	default:
		return s, fmt.Errorf("TALLY_KAFKA_SECURITY_PROTOCOL=%s is none of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", s.Protocol)
	}
	switch verify := strings.ToLower(get("TALLY_KAFKA_SSL_VERIFY_HOSTNAME", "true")); verify {
	case "true", "false":
		s.VerifyHostname = verify == "true"
	default:
		return s, fmt.Errorf("TALLY_KAFKA_SSL_VERIFY_HOSTNAME=%s is neither true nor false", verify)
	}
	if file := get("TALLY_KAFKA_SASL_PASSWORD_FILE", ""); file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return s, fmt.Errorf("TALLY_KAFKA_SASL_PASSWORD_FILE=%s: %w", file, err)
		}
		s.password = strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	}
	if s.sasl() {
		switch s.Mechanism {
		case "SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN":
		default:
			return s, fmt.Errorf("TALLY_KAFKA_SASL_MECHANISM=%s is none of SCRAM-SHA-512, SCRAM-SHA-256, PLAIN", s.Mechanism)
		}
		if s.Username == "" || s.password == "" {
			return s, errors.New(s.Protocol + " needs TALLY_KAFKA_SASL_USERNAME and TALLY_KAFKA_SASL_PASSWORD (or _FILE)")
		}
	}
	return s, nil
}

func (s Settings) sasl() bool { return strings.HasPrefix(s.Protocol, "SASL_") }
func (s Settings) tls() bool  { return strings.HasSuffix(s.Protocol, "SSL") }

// Opts are the client options of these settings (none for PLAINTEXT).
func (s Settings) Opts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if s.tls() {
		cfg, err := s.tlsConfig()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	if s.sasl() {
		opts = append(opts, kgo.SASL(s.mechanism()))
	}
	return opts, nil
}

func (s Settings) mechanism() sasl.Mechanism {
	switch s.Mechanism {
	case "PLAIN":
		return plain.Auth{User: s.Username, Pass: s.password}.AsMechanism()
	case "SCRAM-SHA-256":
		return scram.Auth{User: s.Username, Pass: s.password}.AsSha256Mechanism()
	default:
		return scram.Auth{User: s.Username, Pass: s.password}.AsSha512Mechanism()
	}
}

func (s Settings) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.Truststore != "" {
		pem, err := os.ReadFile(s.Truststore)
		if err != nil {
			return nil, fmt.Errorf("TALLY_KAFKA_SSL_TRUSTSTORE=%s: %w", s.Truststore, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TALLY_KAFKA_SSL_TRUSTSTORE=%s holds no PEM certificate (the exporter reads PEM)", s.Truststore)
		}
		cfg.RootCAs = pool
	}
	if !s.VerifyHostname {
		// the chain is still checked against the trust store; only the name is not
		roots := cfg.RootCAs
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the broker sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			return err
		}
	}
	return cfg, nil
}

// String says what a log may: protocol, mechanism, user and trust store, never the password.
func (s Settings) String() string {
	out := s.Protocol
	if s.sasl() {
		out += " " + s.Mechanism + " as " + s.Username
	}
	if s.tls() && s.Truststore != "" {
		out += ", trusting " + s.Truststore
	}
	return out
}
