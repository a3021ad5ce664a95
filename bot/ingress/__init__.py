"""Ingress monitoring's home: the turnstile feed's intake, the picture per stand and entry
point, the alerts to control, /ingress and its words."""
