package kafkasec

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestPlaintextByDefaultNeedsNoOption(t *testing.T) {
	s, err := FromEnv(env(nil))
	if err != nil || s.Protocol != "PLAINTEXT" {
		t.Fatalf("got %v, %v", s, err)
	}
	if opts, err := s.Opts(); err != nil || len(opts) != 0 {
		t.Fatalf("plaintext options: %d, %v", len(opts), err)
	}
}

func TestScramOverTlsWithThePasswordFromAFile(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("s3cret\nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, selfSignedCA(t), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := FromEnv(env(map[string]string{
		"TALLY_KAFKA_SECURITY_PROTOCOL":  "sasl_ssl",
		"TALLY_KAFKA_SASL_USERNAME":      "tally",
		"TALLY_KAFKA_SASL_PASSWORD":      "from-env",
		"TALLY_KAFKA_SASL_PASSWORD_FILE": pw,
		"TALLY_KAFKA_SSL_TRUSTSTORE":     ca,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if s.password != "s3cret" || !s.VerifyHostname || s.Mechanism != "SCRAM-SHA-512" {
		t.Fatalf("settings %+v", s)
	}
	opts, err := s.Opts()
	if err != nil || len(opts) != 2 {
		t.Fatalf("want TLS and SASL options, got %d, %v", len(opts), err)
	}
	if got := s.String(); strings.Contains(got, "s3cret") || !strings.Contains(got, "SASL_SSL SCRAM-SHA-512 as tally") {
		t.Fatalf("String() = %q", got)
	}
}

func TestWrongSettingsAreRefusedByName(t *testing.T) {
	dir := t.TempDir()
	notPem := filepath.Join(dir, "store.p12")
	_ = os.WriteFile(notPem, []byte("binary"), 0o644)
	for want, m := range map[string]map[string]string{
		"TALLY_KAFKA_SECURITY_PROTOCOL=TLS":      {"TALLY_KAFKA_SECURITY_PROTOCOL": "TLS"},
		"TALLY_KAFKA_SASL_PASSWORD":              {"TALLY_KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "TALLY_KAFKA_SASL_USERNAME": "u"},
		"TALLY_KAFKA_SASL_MECHANISM=GSSAPI":      {"TALLY_KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT", "TALLY_KAFKA_SASL_MECHANISM": "GSSAPI", "TALLY_KAFKA_SASL_USERNAME": "u", "TALLY_KAFKA_SASL_PASSWORD": "p"},
		"TALLY_KAFKA_SSL_VERIFY_HOSTNAME=yes":    {"TALLY_KAFKA_SSL_VERIFY_HOSTNAME": "yes"},
		"TALLY_KAFKA_SASL_PASSWORD_FILE=/nope/x": {"TALLY_KAFKA_SASL_PASSWORD_FILE": "/nope/x"},
	} {
		if _, err := FromEnv(env(m)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: error %v, want one naming %s", m, err, want)
		}
	}
	s, err := FromEnv(env(map[string]string{"TALLY_KAFKA_SECURITY_PROTOCOL": "SSL", "TALLY_KAFKA_SSL_TRUSTSTORE": notPem}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Opts(); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Fatalf("a trust store that is not PEM: %v", err)
	}
}

// selfSignedCA is a CA certificate in PEM, made for the test.
func selfSignedCA(t *testing.T) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "Tally test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
