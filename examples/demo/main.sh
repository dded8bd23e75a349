#!/bin/sh
# The demo's main program: it looks around with hsvc while hinit supervises.
echo "main: I am pid $$; hinit is my parent ($(ps -o comm= -p $PPID 2>/dev/null || echo hinit))"
sleep 2
echo "main: hsvc status after 2s (gateways came back from gateway_state.json):"
hsvc status
echo "main: the boot log of the reconcile:"
cat "$HERMES_HOME/logs/container-boot.log"
echo "main: stale pid file of coder: $(ls "$HERMES_HOME/profiles/coder/gateway.pid" 2>&1 | sed 's/.*: //')"
echo "main: stopping gateway-coder as its user would (hsvc stop records desired_state):"
hsvc stop gateway-coder --wait
cat "$HERMES_HOME/profiles/coder/gateway_state.json"; echo
echo "main: stopping clock, then waiting for flaky to give up..."
hsvc stop clock --wait
hsvc wait flaky --down --timeout 20s
echo "main: hsvc status now:"
hsvc status
echo "main: the clock's log file:"
tail -n 3 "$DEMO_DIR/logs/clock/current"
echo "main: exiting 0; hinit shuts everything down and exits with my status"
