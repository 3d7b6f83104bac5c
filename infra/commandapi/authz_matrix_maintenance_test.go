package commandapi_test

import "net/http"

// maintenanceRows are the rows of the superadmins' Information and
// Maintenance routes: everyone else is refused (403), but for the audit
// trail's verifications, which auditors may run and read too. A rebuild is not
// started here (the matrix runs beside it): an unknown read model shows
// that a superadmin gets past authorization to validation (400).
func (m *matrix) maintenanceRows() []matrixRow {
	superOnly := func(s int) map[string]want {
		no := same(http.StatusForbidden)
		return map[string]want{"superadmin": same(s), "admin": no, "user": no, "monitor": no}
	}
	// Auditors may also verify the audit trail (a job that writes
	// nothing) and read verifications.
	verifiers := func(s int) map[string]want {
		w := superOnly(s)
		w["auditor"], w["domain-auditor"] = same(s), same(s)
		return w
	}
	fixed := func(p string) func(bool) string { return func(bool) string { return p } }
	text := func(b string) func(bool) string { return func(bool) string { return b } }
	verification, err := m.e.maint.StartVerification()
	if err != nil {
		m.t.Fatal(err)
	}
	return []matrixRow{
		{method: "GET", route: "/v1/system", path: fixed("/v1/system"), want: superOnly(http.StatusOK)},
		{method: "POST", route: "/v1/maintenance/rebuilds", path: fixed("/v1/maintenance/rebuilds"),
			body: text(`{"read_model":"no-such-read-model"}`), want: superOnly(http.StatusBadRequest)},
		{method: "GET", route: "/v1/maintenance/rebuilds", path: fixed("/v1/maintenance/rebuilds"), want: superOnly(http.StatusOK)},
		{method: "GET", route: "/v1/audit/verify", path: fixed("/v1/audit/verify"), want: verifiers(http.StatusOK)},
		{method: "GET", route: "/v1/maintenance/rebuilds/:id", path: fixed("/v1/maintenance/rebuilds/0195a0c0-0000-7000-8000-00000000dead"),
			want: superOnly(http.StatusNotFound)},
		{method: "POST", route: "/v1/audit/verify", path: fixed("/v1/audit/verify"), want: verifiers(http.StatusAccepted)},
		{method: "GET", route: "/v1/audit/verify/:id", path: fixed("/v1/audit/verify/" + verification.ID), want: verifiers(http.StatusOK)},
	}
}
