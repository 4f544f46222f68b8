// Package monitoring is what kiso gives a platform's Prometheus: the series its functions export about the XRs
// they are called for, the recording rules and alerts the cluster XR composes into a PrometheusRule, and the
// Grafana dashboard that reads both. One home, so a test can hold each reader to what is exported. The
// end-to-end suite imports it too, so it depends on the standard library alone.
package monitoring
