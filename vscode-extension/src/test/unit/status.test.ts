import * as assert from 'assert';
import { formatSummary } from '../../common/status';

suite('status', () => {
    test('formats counts with plurals and the run id', () => {
        const { text, tooltip } = formatSummary({ breaks: 1, recompiles: 3, run: '/w/.dyn-inspect/runs/run-7' });
        assert.strictEqual(text, '$(flame) 1 break · 3 recompiles');
        assert.strictEqual(tooltip, 'dyn-inspect run run-7: 1 graph break, 3 recompiles. Click to list them.');
    });

    test('says when there is no run yet', () => {
        assert.strictEqual(formatSummary({ breaks: 0, recompiles: 0, run: null }).text, '$(flame) dyn-inspect: no runs');
    });
});
