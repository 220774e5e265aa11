/**
 * The unit project's property tests at their deep counts (thousands of cases each), here in the service project so
 * that the unit project stays a loop of seconds; `make test` runs both. The same properties and seeds as in the unit
 * files, which run a tenth of each count: a failure found at either depth replays as it was found.
 */
import './deep-runs';
import '../unit/alert-line.test';
import '../unit/signal-schema-refusals.test';
