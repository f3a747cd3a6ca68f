"""The Google backend: Calendar, Gmail and Tasks on google-api-python-client, for the workspace tools.

Imported only when the configuration chooses `backend = "google"`. `client.py` is the one module that
imports the untyped Google client; `errors.py` decides what Google's failures become; `credentials.py`
holds the three ways to authenticate; `calendar.py`, `mail.py` and `tasks.py` implement the backend
protocols of `services.backends`.
"""
