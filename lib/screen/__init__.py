"""The admin screen's server (api/admin.py): endpoint.py routes its JSON API, page.py serves its
page, auth.py says who the operator is."""
