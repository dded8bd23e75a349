#!/bin/sh
# The demo's main program: it looks around with hsvc while hinit supervises.
echo "main: I am pid $$; hinit is my parent ($(ps -o comm= -p $PPID 2>/dev/null || echo hinit))"
sleep 2
echo "main: hsvc status after 2s:"
hsvc status
echo "main: stopping clock, then waiting for flaky to give up..."
hsvc stop clock --wait
hsvc wait flaky --down --timeout 20s
echo "main: hsvc status now:"
hsvc status
echo "main: the clock's log file:"
tail -n 3 "$DEMO_DIR/logs/clock/current"
echo "main: exiting 0; hinit shuts everything down and exits with my status"
