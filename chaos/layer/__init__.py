"""The fault layer: faults put in front of the stand-ins, never inside them. The local stack names
this package in DEVSTACK_FAULT_LAYER (devstack/stack.py, devstack/standins/layer.py), and each
stand-in that has a module here lets it wrap its request handler once, at its start:

- resend.py: in front of the Resend stand-in's two hosts: error answers, slow answers, dropped
  connections, expired download URLs, lying Content-Lengths, listings edited item by item;
  POST/DELETE/GET /_control/faults on the API host.
- gateway.py: in front of the API gateway: chosen RPCs' connections dropped before the call runs
  or after it committed; POST/GET /_control/faults.

The chaos run, the tests, the demo and `make faxes` inject faults through it. Local stack only;
never deployed."""
